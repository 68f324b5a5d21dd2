import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The robot's senses on the teacher's dashboard, through the built binaries: board-sim's
/// sensors set by the test (its `--sensors` file, on a pty) → `receive` reads them → its signed
/// watch reports carry the block (Protocol.md §7.12) → `web` → the dashboard's WebSocket, where
/// the robot's row has a `sensors` object with the board's values; a change on the board
/// reaches the row too.
@Suite(.serialized) struct TeacherTileSensorsTests {
    static let key = "ark1-" + String(repeating: "5e", count: 32)

    struct TestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Replaces the sensors file in one rename (board-sim never reads half of it).
    static func set(_ text: String, file: String) throws {
        try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
        guard rename(file + ".new", file) == 0 else { throw TestError("rename \(file)") }
    }

    /// The row's `sensors` as the page reads it, from pushes until `wanted` shows (or `timeout`,
    /// or the socket closes: then the last seen, for the failure message).
    static func waitForSensors(_ client: DashboardClient, _ wanted: [String: Int], timeout: Duration) -> [String: Int]? {
        var last: [String: Int]?
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            let message: [String: Any]?
            do { message = try client.nextMessage(timeout: .milliseconds(500)) } catch { return last }
            guard let rows = message?["rows"] as? [[String: Any]] else { continue }
            for row in rows {
                guard let sensors = row["sensors"] as? [String: Any] else { continue }
                last = sensors.compactMapValues { $0 as? Int }
                if last == wanted { return last }
            }
        }
        return last
    }

    @Test func theBoardsSensorsReachTheDashboardTile() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-tile-sensors-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let keyFile = dir + "/teacher.key"
        try Self.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
        let file = dir + "/sensors"
        try Self.set("sensor1=12 sensor2=0 sensor3=255 sensor4=40 switch=0 temperature=21 humidity=45\n", file: file)

        let sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--firmware", "stock", "--sensors", file,
                                                  "--link", dir + "/board"])
        defer { sim.stop() }
        guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
            throw TestError("board-sim did not start: \(sim.stderr)")
        }
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0",
                                                       "--board", "serial:\(dir)/board", "--session", "tile",
                                                       "--teacher-key-file", keyFile, "--state-dir", dir + "/state"])
        defer { receiver.stop() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "\(receiver.stdout) \(receiver.stderr)")

        let web = try ChildProcess(analogRemote: ["web", "--quiet", "--session", "tile", "--peer", "127.0.0.1:\(port)",
                                                  "--teacher-key-file", keyFile, "--plain-http", "--host", "127.0.0.1", "--port", "0", "--no-qr"])
        defer { web.stop() }
        #expect(web.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("serving http on tcp port ") }, "\(web.stderr)")
        let line = web.stdout.split(separator: "\n").first { $0.hasPrefix("serving http on tcp port ") } ?? ""
        let webPort = try #require(UInt16(line.split(separator: " ").last ?? ""), "\(web.stdout) \(web.stderr)")

        let client = try DashboardClient(port: webPort, key: Self.key)
        defer { client.close() }

        let initial = ["sensor1": 12, "sensor2": 0, "sensor3": 255, "sensor4": 40, "switch": 0, "temperature": 21, "humidity": 45]
        let seen = Self.waitForSensors(client, initial, timeout: .seconds(10))
        #expect(seen == initial, "the tile's sensors: \(String(describing: seen)); web: \(web.stderr)")

        // The switch pressed, a sensor and the temperature changed (below zero: the signed byte).
        try Self.set("sensor1=200 sensor2=0 sensor3=255 sensor4=40 switch=1 temperature=-3 humidity=45\n", file: file)
        let changed = ["sensor1": 200, "sensor2": 0, "sensor3": 255, "sensor4": 40, "switch": 1, "temperature": -3, "humidity": 45]
        let after = Self.waitForSensors(client, changed, timeout: .seconds(10))
        #expect(after == changed, "after the change the tile's sensors: \(String(describing: after))")
    }
}
