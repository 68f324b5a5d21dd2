import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Issue 20, through the built binary: a receiver that is not scheduled for longer than its
/// failsafe (SIGSTOP stands in for a starved machine) judges its controller by when the states
/// arrived, not by when it got round to reading them. Failsafe 1 s, stall 2.5 s, states every
/// 50 ms: only a 1 s gap in the test's own sending could make the first test trip.
@Suite(.serialized) struct ReceiverStallEndToEndTests {
    static let stall: Duration = .milliseconds(2500)
    static let period: Duration = .milliseconds(50)

    /// Sends `state` every `period` for `duration` (the stimulus; nothing here is asserted on time).
    func keepSending(_ state: ControllerState, from peer: ClassroomPeer, for duration: Duration) throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            try peer.send(state)
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func drivingReceiver() throws -> (ClassroomReceiver, ClassroomPeer) {
        let r = try ClassroomReceiver(["--accept", "first", "--failsafe-ms", "1000"])
        let ann = try ClassroomPeer(port: r.port)
        try ann.send(.neutral)
        try ann.send(ControllerState(angle: 0, buttons: .forward))
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap }, "\(r.process.stderr)")
        return (r, ann)
    }

    @Test func statesThatWaitedForAStalledReceiverKeepTheRobotDriving() throws {
        let (r, ann) = try drivingReceiver()
        var paused = r.process.pause()
        defer { if paused { r.process.signal(SIGCONT) } }
        #expect(paused, "the receiver did not stop")
        try keepSending(ControllerState(angle: 0, buttons: .forward), from: ann, for: Self.stall)
        r.process.signal(SIGCONT)
        paused = false

        // A new state after the stall is applied at once: the robot never stopped.
        try ann.send(ControllerState(angle: 0, buttons: .backward))
        #expect(r.waitForMap { $0 == ClassroomReceiver.kitMap(left: 0x40, right: 0xC0) }, "\(r.process.stderr)")
        let maps = r.maps         // before the stop, which rests the motors
        let s = try r.stop()
        #expect(!r.process.stderr.contains("FAILSAFE"), "\(r.process.stderr)")
        #expect(s["failsafes"] == 0, "\(s)")
        let drove = try #require(maps.firstIndex(of: ClassroomReceiver.forwardMap))
        #expect(!maps[drove...].contains(where: ClassroomReceiver.motorsStopped), "the motors stopped while driving: \(maps)")
    }

    @Test func aControllerThatFellSilentDuringTheStallStillTripsTheFailsafe() throws {
        let (r, ann) = try drivingReceiver()
        var paused = r.process.pause()
        defer { if paused { r.process.signal(SIGCONT) } }
        #expect(paused, "the receiver did not stop")
        // Half a second of states, then silence for the rest of the stall: the last one queued
        // arrived about 2 s before the receiver reads it.
        try keepSending(ControllerState(angle: 0, buttons: .forward), from: ann, for: .milliseconds(500))
        Thread.sleep(forTimeInterval: 2.0)
        r.process.signal(SIGCONT)
        paused = false

        #expect(r.process.waitForOutput { _, err in err.contains("FAILSAFE") }, "\(r.process.stderr)")
        #expect(r.waitForMap { ClassroomReceiver.motorsStopped($0) })
        // Moving states are held until a resting one: the failsafe is not lifted by the queue.
        try ann.send(ControllerState(angle: 0, buttons: .forward))
        try ann.send(.neutral)
        try ann.send(ControllerState(angle: 0, buttons: .backward))
        #expect(r.waitForMap { $0 == ClassroomReceiver.kitMap(left: 0x40, right: 0xC0) })
        let s = try r.stop()
        #expect(s["failsafes"] == 1, "\(s)")
    }
}
