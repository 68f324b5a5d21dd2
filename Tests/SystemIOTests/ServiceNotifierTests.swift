#if canImport(Glibc)
import Glibc
#endif
import SystemIO
import Testing

/// sd_notify's datagram: to a path, and to an abstract address (`@name`), one datagram per send.
@Suite struct ServiceNotifierTests {
    /// A bound unix datagram socket; `name` starting with NUL is abstract.
    static func listener(_ name: [UInt8]) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in name.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + name.count)
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        #expect(bound == 0, "bind: errno \(errno)")
        return fd
    }

    static func receive(_ fd: Int32) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 2000) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : nil
    }

    @Test func toAnAbstractAddress() throws {
        let name = "analog-remote-test-\(getpid())"
        let fd = Self.listener([0] + Array(name.utf8))
        defer { close(fd) }
        let notifier = try #require(try ServiceNotifier(address: "@" + name, watchdogMicroseconds: 5_000_000))
        #expect(notifier.keepAliveInterval == .milliseconds(2500))
        try notifier.send(["READY=1", "STATUS=receiving on udp port 27183"])
        #expect(Self.receive(fd) == "READY=1\nSTATUS=receiving on udp port 27183\n")
    }

    @Test func toAPath() throws {
        let path = "/tmp/analog-remote-notify-\(getpid())"
        unlink(path)
        let fd = Self.listener(Array(path.utf8) + [0])
        defer { close(fd); unlink(path) }
        let notifier = try #require(try ServiceNotifier(address: path))
        #expect(notifier.keepAliveInterval == nil)
        try notifier.send(["WATCHDOG=1"])
        #expect(Self.receive(fd) == "WATCHDOG=1\n")
    }

    @Test func noAddressNoNotifier() throws {
        #expect(try ServiceNotifier(address: "") == nil)
    }

    @Test func nobodyListeningIsAnError() throws {
        let notifier = try #require(try ServiceNotifier(address: "/nonexistent/notify"))
        #expect(throws: SystemError.self) { try notifier.send(["READY=1"]) }
    }
}
