import AnalogRemoteKit
import Foundation
import TestSupport
import Testing

/// A custom robot's sensors reach a Swift controller: `RobotReceiver.report` on one side,
/// `RobotController.sensors` on the other (Protocol.md §7.9.1).
@Suite(.serialized) struct SensorReadingTests {
    @Test func whatTheRobotReportsReachesTheController() async throws {
        let receiver = try await RobotReceiver(name: "sensing-robot", port: 0, advertise: false, stopsOnSignals: false)
        let robot = try await RobotController(.address("127.0.0.1:\(receiver.port)"), displayName: "watcher")
        let sensors = robot.sensors
        let light = SensorReading(sensors: [200, 0, 17, 255], switchPressed: false, temperature: -3, humidity: 45)
        let bumped = SensorReading(sensors: [200, 0, 17, 255], switchPressed: true, temperature: -3, humidity: 45)
        receiver.report(light)
        let seen = await within { () -> [SensorReading] in
            var seen: [SensorReading] = []
            for await reading in sensors {
                seen.append(reading)
                if reading == light { receiver.report(bumped) }
                if reading == bumped { break }
            }
            return seen
        }
        #expect(seen.first == light && seen.last == bumped, "\(String(describing: seen))")
        // A new sequence starts with the latest reading.
        var again = robot.sensors.makeAsyncIterator()
        #expect(await again.next() == bumped)
        await robot.close()
        await receiver.close()
    }

    @Test func aReadingIsClampedToTheWire() {
        let r = SensorReading(sensors: [300, -1], switchPressed: true, temperature: 200, humidity: 150)
        #expect(r.sensors == [255, 0, 0, 0] && r.temperature == 127 && r.humidity == 100)
    }
}

/// board-sim → `receive` (the built binaries) → ``RobotController/sensors``: what the test sets
/// on the simulated board arrives in a Swift program.
@Suite(.serialized) struct BoardSensorsToKitTests {
    @Test func boardSimsSensorsReachRobotControllerSensors() async throws {
        let dir = NSTemporaryDirectory() + "analog-remote-kit-sensors-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/sensors"
        try "sensor1=1 sensor2=2 sensor3=3 sensor4=4 temperature=19 humidity=50\n".write(toFile: file, atomically: true, encoding: .utf8)
        let sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--sensors", file, "--link", dir + "/board"])
        defer { sim.stop() }
        #expect(sim.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0",
                                                       "--board", "serial:\(dir)/board", "--state-dir", dir + "/state"])
        defer { receiver.stop() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.split(separator: " ").last ?? ""), "\(receiver.stdout) \(receiver.stderr)")

        let robot = try await RobotController(.address("127.0.0.1:\(port)"), displayName: "kit-watcher")
        let sensors = robot.sensors
        let start = SensorReading(sensors: [1, 2, 3, 4], switchPressed: false, temperature: 19, humidity: 50)
        let pressed = SensorReading(sensors: [1, 2, 3, 4], switchPressed: true, temperature: 19, humidity: 50)
        let seen = await within(.seconds(20)) { () -> [SensorReading] in
            var seen: [SensorReading] = []
            for await reading in sensors {
                seen.append(reading)
                if reading == start {
                    try? "sensor1=1 sensor2=2 sensor3=3 sensor4=4 switch=1 temperature=19 humidity=50\n"
                        .write(toFile: file + ".new", atomically: false, encoding: .utf8)
                    rename(file + ".new", file)
                }
                if reading == pressed { break }
            }
            return seen
        }
        #expect(seen.contains(start) && seen.last == pressed, "\(seen)")
        await robot.close()
    }
}
