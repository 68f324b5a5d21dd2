import ControlPlane
import ControlWire
import RemoteWire
import Testing

/// The broadcast stop's repeats interleave with a unicast stop (Protocol.md §7.6): a stop whose
/// nonce was taken is answered, not refused, while the robot is still held; once released, the
/// same stop is a replay and refused.
@Suite struct StopAllGuardRepeatTests {
    let key = TeacherKey(macKey: Array("teacher-secret".utf8))
    let now: UInt64 = 1_764_000_000_000

    func command(_ action: ControlMessage.StopAll.Action, nonce: UInt64, at millis: UInt64, target: String = "") -> ControlMessage.StopAll {
        var c = ControlMessage.StopAll(action: action, unixMillis: millis, nonce: nonce, session: "class-3b", target: WireText(target))
        c.sign(key: key.macKey)
        return c
    }

    @Test func aStopTakenBeforeIsARepeatWhileHeldAndAReplayOnceReleased() {
        var guardian = StopAllGuard(session: "class-3b", instance: "robot-1", teacherKey: key)
        let broadcast = command(.stop, nonce: 1, at: now)
        #expect(guardian.consider(broadcast, nowUnixMillis: now) == .take(stop: true))
        #expect(guardian.consider(command(.stop, nonce: 2, at: now + 5), nowUnixMillis: now + 6) == .take(stop: true))
        #expect(guardian.consider(broadcast, nowUnixMillis: now + 50) == .repeated, "the broadcast's next copy")
        #expect(guardian.holding)
        #expect(guardian.consider(command(.release, nonce: 3, at: now + 1000, target: "robot-1"), nowUnixMillis: now + 1000) == .take(stop: false))
        #expect(guardian.consider(broadcast, nowUnixMillis: now + 2000) == .refused("stop-all nonce already used (replay)"))
        #expect(!guardian.holding)
    }
}
