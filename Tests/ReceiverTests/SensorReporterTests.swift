import BoardLink
import BoardProtocol
import ControlWire
import Receiver
import RemoteWire
import Testing

/// Which robot-sensors report (Protocol.md §7.9.1) each controller gets, and when, with a
/// manual clock: a changed block goes to everyone in the turn that has it, an unchanged one is
/// repeated every 500 ms, and nothing goes while the board is missing or before a fresh read.
@Suite struct SensorReporterTests {
    let t0 = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }
    static let calm = SensorBlock(sensors: [10, 20, 30, 40], switchValue: 0, temperature: 21, humidity: 45)
    static let pressed = SensorBlock(sensors: [10, 20, 30, 40], switchValue: 1, temperature: 21, humidity: 45)

    func sent(_ out: [(String, RobotSensors)]) -> [String: RobotSensors] {
        Dictionary(out.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func aChangeGoesToEveryControllerAtOnceWithTheNextSample() {
        var r = RobotStateReporter<String>(board: "sim")
        r.accepted("A")
        r.accepted("B")
        let first = sent(r.sensorsDue(latest: (Self.calm, 1), now: at(0)))
        #expect(Set(first.keys) == ["A", "B"] && first["A"]?.block == Self.calm && first["A"]?.sample == 1)
        // The same block 100 ms later: nothing.
        #expect(r.sensorsDue(latest: (Self.calm, 2), now: at(100)).isEmpty)
        // The switch is pressed: both at once, sample 2.
        let second = sent(r.sensorsDue(latest: (Self.pressed, 3), now: at(150)))
        #expect(Set(second.keys) == ["A", "B"] && second["B"]?.block == Self.pressed && second["B"]?.sample == 2)
    }

    @Test func anUnchangedBlockIsRepeatedEveryHalfSecondWithTheSameSample() {
        var r = RobotStateReporter<String>(board: "sim")
        r.accepted("A")
        var times: [Int] = []
        var serial: UInt64 = 0
        for ms in stride(from: 0, through: 2000, by: 100) {
            serial += 1
            for (_, s) in r.sensorsDue(latest: (Self.calm, serial), now: at(ms)) {
                #expect(s.sample == 1)
                times.append(ms)
            }
        }
        #expect(times == [0, 500, 1000, 1500, 2000])
    }

    @Test func nothingWhileTheBoardIsMissingAndNothingStaleAfterItComesBack() {
        var r = RobotStateReporter<String>(board: "sim")
        r.accepted("A")
        #expect(r.sensorsDue(latest: (Self.calm, 5), now: at(0)).count == 1)
        r.boardLink(.disconnected(device: "sim", reason: "unplugged"))
        #expect(r.sensorsDue(latest: (Self.pressed, 6), now: at(600)).isEmpty, "board missing")
        r.boardLink(.reconnected(device: "sim"))
        // Back, but the latest block is the one read before the loss: not sent.
        #expect(r.sensorsDue(latest: (Self.pressed, 6), now: at(700)).isEmpty)
        // A fresh read is.
        let fresh = sent(r.sensorsDue(latest: (Self.pressed, 7), now: at(800)))
        #expect(fresh["A"]?.block == Self.pressed)
    }

    @Test func noControllerOrNoReadingSendsNothingAndALeaverIsForgotten() {
        var r = RobotStateReporter<String>(board: "sim")
        #expect(r.sensorsDue(latest: (Self.calm, 1), now: at(0)).isEmpty, "nobody said hello")
        r.accepted("A")
        #expect(r.sensorsDue(latest: nil, now: at(10)).isEmpty, "no reading yet")
        #expect(r.sensorsDue(latest: (Self.calm, 2), now: at(20)).count == 1)
        r.left("A")
        r.accepted("B")
        let next = sent(r.sensorsDue(latest: (Self.pressed, 3), now: at(30)))
        #expect(Set(next.keys) == ["B"])
    }
}
