import AnalogRemoteKit
import Foundation
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
