import ControlPlane
import Receiver
import RemoteWire
import SystemIO
import Testing

/// The engine on the receive loop's own time (``Tick``, what the service passes per datagram):
/// the failsafe and the ownership lapse fall on the same nanosecond as with instants.
@Suite struct EngineTickTests {
    let timeout: Int64 = 250_000_000
    let resting = StatePacket.encode(ControllerState(angle: 0, buttons: []))
    let driving = StatePacket.encode(ControllerState(angle: 0, buttons: .forward))

    @Test func theFailsafeTripsOnTheNanosecondOfItsDeadline() {
        var engine = ReceiverEngine<String>(mapping: .kit, policy: .first, timeout: .nanoseconds(timeout))
        let t0 = Tick(nanoseconds: 5_000)
        _ = engine.datagram(resting, length: 8, from: "A", at: t0)
        _ = engine.datagram(driving, length: 8, from: "A", at: t0 + 1_000)
        #expect(engine.failsafe.isDriving)
        #expect(engine.deadlineTick == t0 + (1_000 + timeout))
        #expect(engine.tick(at: t0 + (1_000 + timeout - 1)).notices.isEmpty)
        #expect(engine.failsafe.isDriving)
        // The owner's lapse (timeout + reclaim 0) falls on the same nanosecond.
        #expect(engine.tick(at: t0 + (1_000 + timeout)).notices == [.failsafe(.silence), .ownerSilent("A")])
        #expect(!engine.failsafe.isDriving)
        #expect(engine.ownership.owner == nil)
    }

    /// A state read late but stamped in time counts from its arrival, to the nanosecond.
    @Test func anArrivalStampJustInTimeKeepsDriving() {
        var engine = ReceiverEngine<String>(mapping: .kit, policy: .first, timeout: .nanoseconds(timeout))
        let t0 = Tick(nanoseconds: 0)
        _ = engine.datagram(resting, length: 8, from: "A", at: t0)
        let late = t0 + (timeout + 50_000)
        _ = engine.datagram(driving, length: 8, from: "A", at: late, arrived: t0 + (timeout - 1))
        #expect(engine.failsafe.isDriving)
        // Each read long after the deadline; what counts is the stamp against the last arrival.
        let last = t0 + (timeout - 1)
        _ = engine.datagram(driving, length: 8, from: "A", at: last + 2 * timeout, arrived: last + (timeout - 1))
        #expect(engine.failsafe.isDriving, "arrived 1 ns before its deadline")
        let step = engine.datagram(driving, length: 8, from: "A", at: last + 4 * timeout,
                                   arrived: last + (2 * timeout - 1))
        #expect(step.notices.contains(.failsafe(.silence)), "arrived exactly a timeout after the last one")
        #expect(!engine.failsafe.isDriving)
    }
}
