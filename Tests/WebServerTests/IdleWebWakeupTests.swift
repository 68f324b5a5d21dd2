import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An idle `analog-remote web` with a dashboard open sleeps between its protocol's own events
/// (the watch once a second, the robot's report, one push a second): no thread wakes on a short
/// timer. Measured as the built binary's voluntary context switches (its sleeps; preemption on a
/// loaded machine is not a wake-up of its own) summed over its threads
/// (`/proc/PID/task/*/status`) across 5 s, with one watched robot on loopback; the bound is
/// generous (each push alone costs a few switches across NIO and the concurrency pool) and far
/// under a 50 ms link poll plus a 25 ms push loop (~260 a second).
@Suite(.serialized) struct IdleWebWakeupTests {
    static let key = "ark1-" + String(repeating: "4d", count: 32)

    @Test func anIdleDashboardWakesTheServerOnlyForItsProtocol() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idle-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("teacher.key").path
        try Self.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)

        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim",
                                                       "--session", "idle", "--teacher-key-file", keyFile,
                                                       "--state-dir", dir.appendingPathComponent("state").path])
        defer { receiver.signal(SIGTERM); _ = receiver.wait() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "\(receiver.stdout)")

        let web = try ChildProcess(analogRemote: ["web", "--quiet", "--session", "idle", "--peer", "127.0.0.1:\(port)",
                                                  "--teacher-key-file", keyFile, "--plain-http", "--host", "127.0.0.1", "--port", "0", "--no-qr"])
        defer { web.signal(SIGTERM); _ = web.wait() }
        #expect(web.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("serving http on tcp port ") }, "\(web.stderr)")
        let line = web.stdout.split(separator: "\n").first { $0.hasPrefix("serving http on tcp port ") } ?? ""
        let webPort = try #require(UInt16(line.split(separator: " ").last ?? ""), "\(web.stdout) \(web.stderr)")

        let client = try DashboardClient(port: webPort, key: Self.key)
        defer { client.close() }
        // Until the robot is watched (its row has a state): from then on everything is idle.
        var watched = false
        let end = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < end, !watched {
            guard let rows = try client.nextMessage(timeout: .seconds(1))?["rows"] as? [[String: Any]] else { continue }
            watched = rows.contains { $0["state"] as? String == "free" }
        }
        try #require(watched, "the dashboard never showed the robot watched")

        let before = ProcessSleeps.count(web.pid), start = ContinuousClock.now
        var pushes = 0
        while ContinuousClock.now - start < .seconds(5) {
            if try client.nextMessage(timeout: .milliseconds(500)) != nil { pushes += 1 }
        }
        let seconds = Double((ContinuousClock.now - start).components.seconds)
            + Double((ContinuousClock.now - start).components.attoseconds) / 1e18
        let rate = Double(ProcessSleeps.count(web.pid) - before) / seconds
        print("idle web with a dashboard open: \(String(format: "%.1f", rate)) context switches a second, \(pushes) pushes in 5 s")
        #expect(rate < 80, "an idle web woke \(rate) times a second")
        #expect(pushes >= 3, "the dashboard was not kept up to date while idle (\(pushes) pushes in 5 s)")
    }
}
