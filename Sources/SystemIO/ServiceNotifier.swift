#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// systemd's notify protocol (`sd_notify(3)`) without libsystemd: one datagram of
/// `KEY=VALUE` lines to the unix socket named by `$NOTIFY_SOCKET`.
///
/// ```
///  $NOTIFY_SOCKET = /run/systemd/notify     → sockaddr_un path, NUL-terminated
///                 = @/org/freedesktop/…     → abstract: sun_path[0] = 0, no terminator,
///                                             the address length counts the name bytes only
///  datagram       = "READY=1\nSTATUS=receiving on udp port 27183\n"
/// ```
///
/// The watchdog (`WatchdogSec=` in the unit) arrives as `$WATCHDOG_USEC`, and `$WATCHDOG_PID`
/// when it is meant for one process only: keep-alives (`WATCHDOG=1`) are due at half the
/// timeout, as `sd_watchdog_enabled(3)` recommends. Nothing here reads the clock: the caller's
/// loop sends them, so a stalled loop stops them and systemd restarts the service.
package final class ServiceNotifier: Sendable {
    /// `$NOTIFY_SOCKET` as given.
    package let address: String
    /// Half of `$WATCHDOG_USEC`, or nil when no watchdog is asked for (or it is another pid's).
    package let keepAliveInterval: Duration?
    private let socket: Descriptor

    /// Opens the datagram socket for `address`; nil when `address` is empty.
    package init?(address: String, watchdogMicroseconds: UInt64? = nil) throws(SystemError) {
        guard !address.isEmpty else { return nil }
        self.address = address
        keepAliveInterval = watchdogMicroseconds.flatMap { $0 > 0 ? Duration.microseconds(Int64($0 / 2)) : nil }
        let fd = try Syscall.call("socket(AF_UNIX, SOCK_DGRAM)", subject: address) {
            Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        socket = Descriptor(adopting: fd, label: "notify socket \(address)")
    }

    /// From the process environment: nil when `$NOTIFY_SOCKET` is unset (not run by systemd).
    /// `$WATCHDOG_USEC` counts only when `$WATCHDOG_PID` is unset or this process.
    package static func fromEnvironment() throws(SystemError) -> ServiceNotifier? {
        guard let address = environment("NOTIFY_SOCKET") else { return nil }
        var usec = environment("WATCHDOG_USEC").flatMap { UInt64($0) }
        if let pid = environment("WATCHDOG_PID").flatMap({ Int32($0) }), pid != getpid() { usec = nil }
        return try ServiceNotifier(address: address, watchdogMicroseconds: usec)
    }

    /// Sends `fields` (`["READY=1", "STATUS=…"]`) as one datagram. Fails when nobody listens.
    package func send(_ fields: [String]) throws(SystemError) {
        let message = Array(fields.map { $0 + "\n" }.joined().utf8)
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        var name = Array(address.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard name.count < capacity else {
            throw SystemError(call: "sendto", errno: ENAMETOOLONG, subject: address)
        }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            for (i, b) in name.enumerated() { raw[i] = b }
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + name.count + (abstract ? 0 : 1)
        let fd = socket.rawValue
        try Syscall.call("sendto", subject: address) {
            withUnsafePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    message.withUnsafeBytes { m in
                        Glibc.sendto(fd, m.baseAddress, m.count, Int32(MSG_NOSIGNAL), sa, socklen_t(length))
                    }
                }
            }
        }
    }

    package func close() { socket.close() }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let s = String(cString: value)
        return s.isEmpty ? nil : s
    }
}
