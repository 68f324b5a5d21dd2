import Foundation
import SystemIO
import TestSupport
import Testing

/// A fake systemd notify socket: a unix datagram socket this test owns, as `$NOTIFY_SOCKET`.
final class NotifyListener {
    let path: String
    private let fd: Int32
    /// Every datagram so far, with when it arrived.
    private(set) var messages: [(text: String, at: ContinuousClock.Instant)] = []

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(getpid())-\(UUID().uuidString.prefix(8))").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw ServiceTestError("cannot bind \(path): errno \(errno)") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Reads datagrams until `predicate` holds for the list or `timeout` passes.
    @discardableResult
    func collect(timeout: Duration, until predicate: ([String]) -> Bool = { _ in false }) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if predicate(messages.map(\.text)) { return true }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = deadline - .now
            // At most 50 ms per wait, so a predicate on something else (stderr) is seen soon.
            let ms = Int32(min(50, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            guard poll(&pfd, 1, ms) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { messages.append((String(decoding: buffer.prefix(n), as: UTF8.self), .now)) }
        }
        return predicate(messages.map(\.text))
    }

    /// Reads every datagram already queued, without waiting. A unix datagram is queued by the
    /// time `sendto` returns, so after a line the sender printed later, this has all it sent before.
    func drain() {
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 0) > 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return }
            messages.append((String(decoding: buffer.prefix(n), as: UTF8.self), .now))
        }
    }

    var keepAlives: [ContinuousClock.Instant] { messages.filter { $0.text == "WATCHDOG=1\n" }.map(\.at) }
}

struct ServiceTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// `receive` under systemd's `Type=notify` contract (packaging/analog-remote.service), with a
/// fake `$NOTIFY_SOCKET`: READY=1 once the board is open, WATCHDOG=1 at half of
/// `$WATCHDOG_USEC` from the receive loop, none once the loop stalls, RELOADING=1/READY=1 on
/// SIGHUP.
@Suite(.serialized) struct ServiceEndToEndTests {
    static func start(_ listener: NotifyListener, watchdogUsec: Int?, stallAfterMs: Int? = nil,
                      extra: [String] = []) throws -> ChildProcess {
        var env = ["NOTIFY_SOCKET": listener.path]
        if let watchdogUsec { env["WATCHDOG_USEC"] = "\(watchdogUsec)" }
        if let stallAfterMs { env["ANALOG_REMOTE_TEST_STALL_AFTER_MS"] = "\(stallAfterMs)" }
        return try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim"] + extra,
                                environment: env)
    }

    @Test func readyOnceTheBoardIsOpenThenKeepAlivesAtHalfTheWatchdog() throws {
        let listener = try NotifyListener()
        let receiver = try Self.start(listener, watchdogUsec: 1_000_000)
        defer { receiver.stop() }
        #expect(listener.collect(timeout: .seconds(20)) { $0.contains { $0.hasPrefix("READY=1\n") } })
        let ready = try #require(listener.messages.first { $0.text.hasPrefix("READY=1\n") })
        #expect(ready.text.contains("STATUS=receiving on udp port "))
        #expect(ready.text.contains("MAINPID=\(receiver.pid)"))
        // The board is opened before the loop that sends READY=1 starts (a board that cannot be
        // opened gets no READY=1 at all: the next test); its log line arrives through a pipe.
        #expect(receiver.waitForOutput { _, err in err.contains("board connected") }, "\(receiver.stderr)")
        // 3 s of a 1 s watchdog: keep-alives every ~0.5 s, never a gap systemd would kill for.
        listener.collect(timeout: .seconds(3))
        let beats = listener.keepAlives.filter { $0 >= ready.at }
        #expect(beats.count >= 4, "only \(beats.count) keep-alives in 3 s")
        #expect(beats.count <= 8, "\(beats.count) keep-alives in 3 s: more than one per 0.5 s")
        for (a, b) in zip(beats, beats.dropFirst()) {
            #expect(b - a < .milliseconds(1000), "a gap of \(b - a) reaches the watchdog timeout")
            #expect(b - a >= .milliseconds(250), "a gap of \(b - a) is well under half the timeout")
        }
        receiver.signal(SIGTERM)
        #expect(receiver.wait() == 0)
        listener.collect(timeout: .seconds(2)) { $0.contains("STOPPING=1\n") }
        #expect(listener.messages.last?.text == "STOPPING=1\n")
    }

    @Test func noReadyWhenTheBoardCannotBeOpened() throws {
        let listener = try NotifyListener()
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:/nonexistent/ttyACM9"],
                                        environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"])
        defer { receiver.stop() }
        #expect(receiver.wait() == 3)
        listener.collect(timeout: .milliseconds(300))
        #expect(!listener.messages.contains { $0.text.hasPrefix("READY=1") })
    }

    @Test func aStalledLoopStopsTheKeepAlives() throws {
        let listener = try NotifyListener()
        let receiver = try Self.start(listener, watchdogUsec: 400_000, stallAfterMs: 1500)
        defer { receiver.stop() }
        #expect(listener.collect(timeout: .seconds(20)) { $0.contains { $0.hasPrefix("READY=1\n") } })
        #expect(listener.collect(timeout: .seconds(20)) { _ in receiver.stderr.contains("stops serving") })
        listener.drain()
        let beforeStall = listener.keepAlives.count
        #expect(beforeStall >= 2, "keep-alives before the stall: \(beforeStall)")
        // Two watchdog timeouts after the stall: systemd would have killed it; not one keep-alive.
        listener.collect(timeout: .milliseconds(800))
        #expect(listener.keepAlives.count == beforeStall, "a keep-alive after the loop stalled")
        // Even stalled, SIGTERM leaves the board at rest and exits 0.
        receiver.signal(SIGTERM)
        #expect(receiver.wait() == 0)
        #expect(receiver.stdout.contains("summary "))
    }

    @Test func sighupRereadsTheConfigAndKeepsRunningOnABadOne() throws {
        let listener = try NotifyListener()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("receive-\(UUID().uuidString).toml").path
        try "failsafe-ms = 300\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let receiver = try Self.start(listener, watchdogUsec: nil, extra: ["--config", file])
        defer { receiver.stop() }
        #expect(listener.collect(timeout: .seconds(20)) { $0.contains { $0.hasPrefix("READY=1\n") } })

        try "failsafe-ms = 400\n".write(toFile: file, atomically: true, encoding: .utf8)
        receiver.signal(SIGHUP)
        #expect(listener.collect(timeout: .seconds(10)) { $0.filter { $0.hasPrefix("READY=1\n") }.count == 2 })
        #expect(listener.messages.contains { $0.text.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") })
        #expect(receiver.waitForOutput { _, err in err.contains("reload: failsafe-ms changed; it takes effect after a restart") })

        try "failsafe-msx = 400\n".write(toFile: file, atomically: true, encoding: .utf8)
        receiver.signal(SIGHUP)
        #expect(listener.collect(timeout: .seconds(10)) { $0.filter { $0.hasPrefix("READY=1\n") }.count == 3 })
        #expect(receiver.waitForOutput { _, err in err.contains("reload failed, keeping the running configuration: config \(file): key \"failsafe-msx\"") })
        #expect(receiver.isRunning)
        receiver.signal(SIGTERM)
        #expect(receiver.wait() == 0)
    }
}

/// Config files through the built binary: file < flag, and a bad file is one line naming the
/// file and the key, exit 2, before anything is opened.
@Suite struct ConfigFileEndToEndTests {
    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The `receiving [… failsafe_ms=N …]` log line of a receiver started with `arguments`.
    static func failsafe(_ arguments: [String]) throws -> String? {
        let r = try ChildProcess(analogRemote: ["receive", "--quiet", "--port", "0"] + arguments)
        defer { r.stop() }
        _ = r.waitForOutput(timeout: .seconds(20)) { _, err in err.contains("failsafe_ms=") }
        guard let range = r.stderr.range(of: "failsafe_ms=") else { return nil }
        return String(r.stderr[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func theFileSetsOptionsAndAFlagOverridesIt() throws {
        let file = try Self.write("board = \"sim\"\nno-advertise = true\nfailsafe-ms = 300\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try Self.failsafe(["--config", file]) == "300")
        #expect(try Self.failsafe(["--config", file, "--failsafe-ms", "400"]) == "400")
        #expect(try Self.failsafe(["--failsafe-ms", "450", "--config=\(file)"]) == "450")
    }

    @Test(arguments: [
        ("prot = 5\n", "prot"),
        ("accept = \"everyone\"\n", "accept"),
        ("expected-rate = 0\n", "expected-rate"),
        ("no-advertise = 1\n", "no-advertise"),
    ])
    func aBadFileIsOneLineWithFileAndKeyAndExit2(text: String, key: String) throws {
        let file = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try ChildProcess(analogRemote: ["receive", "--config", file, "--port", "0", "--board", "sim", "--no-advertise"])
        #expect(r.wait() == 2)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.hasPrefix("analog-remote: config \(file): key \"\(key)\"") == true, "\(r.stderr)")
        #expect(!r.stdout.contains("receiving on udp port"))
    }

    /// A receive.toml that TOMLKit would abort on (found by fuzzing): one line, exit 2, no crash.
    @Test(arguments: ["[?x]\nport = 0\n", "accept = [}\n"])
    func aFileTheTOMLLibraryWouldAbortOnIsOneLineAndExit2(text: String) throws {
        let file = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try ChildProcess(analogRemote: ["receive", "--config", file, "--port", "0", "--board", "sim", "--no-advertise"])
        #expect(r.wait() == 2)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.contains("(not valid TOML)") == true, "\(r.stderr)")
    }

    @Test func helpWorksWithABadConfigFile() throws {
        let file = try Self.write("prot = 5\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try ChildProcess(analogRemote: ["receive", "--config", file, "--port", "0", "--help"])
        #expect(r.wait() == 0)
        #expect(r.stdout.contains("--config <file>"))
    }

    @Test func theControllerReadsItsXDGConfig() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home + "/analog-remote", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try "rate = 5000\n".write(toFile: home + "/analog-remote/control.toml", atomically: true, encoding: .utf8)
        let bad = try ChildProcess(analogRemote: ["control", "--peer", "127.0.0.1:9", "--input", "stdin"],
                                   environment: ["XDG_CONFIG_HOME": home])
        #expect(bad.wait() == 2)
        #expect(bad.stderr.contains("config \(home)/analog-remote/control.toml: key \"rate\""), "\(bad.stderr)")
        // The flag wins over the file.
        let good = try ChildProcess(analogRemote: ["control", "--peer", "127.0.0.1:9", "--plain", "--input", "stdin", "--rate", "20", "-q"],
                                    stdin: true, environment: ["XDG_CONFIG_HOME": home])
        good.closeStdin()
        #expect(good.wait() == 0, "\(good.stderr)")
    }

    /// Every option of `receive` and `control` (their help) is a config key, and nothing else.
    @Test(arguments: ["control", "receive"])
    func everyOptionIsAKey(command: String) throws {
        let help = try ChildProcess(analogRemote: ["help", command])
        #expect(help.wait() == 0)
        // Option lines of the help: `  --port <port>`, `  -q, --quiet`.
        var options: Set<String> = []
        for line in help.stdout.split(separator: "\n") {
            var words = line.split(separator: " ")
            if words.first?.hasPrefix("-") == true && words.first?.hasPrefix("--") == false { words.removeFirst() }
            guard line.hasPrefix("  -"), let word = words.first, word.hasPrefix("--") else { continue }
            options.insert(String(word.dropFirst(2)))
        }
        options.subtract(["help", "config", "version"])
        let file = try Self.write("not-an-option = 1\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try ChildProcess(analogRemote: [command, "--config", file])
        #expect(r.wait() == 2)
        let known = try #require(r.stderr.range(of: "known: "))
        let keys = Set(r.stderr[known.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
            .components(separatedBy: ", ").filter { !$0.hasPrefix("[") })
        #expect(keys == options)
    }
}
