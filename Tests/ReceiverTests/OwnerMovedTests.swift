import ControlPlane
import Receiver
import SystemIO
import RemoteWire
import Testing

/// One address per receiver (Protocol.md §6.4): the owner recognised on a new address
/// (``ReceiverEngine/moved(from:to:at:)``, after the control plane matched its connection) keeps
/// driving — no failsafe trip, no change of owner.
@Suite struct OwnerMovedTests {
    let t0 = ContinuousClock.now

    /// The engine side: the owner at its old address, then its states from the new one right
    /// after the move — every one applied, no failsafe trip, no change of owner.
    @Test func theOwnerMovedKeepsDrivingWithoutAFailsafe() {
        var engine = ReceiverEngine<String>(mapping: .kit, policy: .first, timeout: .milliseconds(250))
        _ = engine.start()
        let rest = StatePacket.encode(.neutral)
        let drive = StatePacket.encode(ControllerState(angle: 0, buttons: .a))
        var ms = 0
        for _ in 0..<10 {
            _ = engine.datagram(rest, length: 8, from: "old", at: Tick(t0 + .milliseconds(ms)))
            ms += 20
        }
        _ = engine.datagram(drive, length: 8, from: "old", at: Tick(t0 + .milliseconds(ms)))
        let before = engine.counters.applied
        _ = engine.moved(from: "old", to: "new", at: Tick(t0 + .milliseconds(ms + 20)))
        #expect(engine.ownership.owner == "new")
        for _ in 0..<20 {
            ms += 20
            let step = engine.datagram(drive, length: 8, from: "new", at: Tick(t0 + .milliseconds(ms)))
            #expect(!step.notices.contains { if case .failsafe = $0 { true } else { false } })
        }
        #expect(engine.counters.failsafeTrips == 0)
        #expect(engine.counters.applied == before + 20)
        #expect(engine.counters.ignored == 0)
        // A state from the old address now is someone else's.
        _ = engine.datagram(drive, length: 8, from: "old", at: Tick(t0 + .milliseconds(ms + 5)))
        #expect(engine.counters.ignored == 1)
    }
}
