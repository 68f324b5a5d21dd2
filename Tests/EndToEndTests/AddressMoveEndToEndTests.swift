import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// One address per receiver (Protocol.md §6.4) through the built binary: the owner's controller
/// moves to another source address — its ping with the receiver's connection id first, then its
/// states — and keeps driving, even when the receiver reads the ping and the state in one wake-up.
@Suite(.serialized) struct AddressMoveEndToEndTests {
    @Test func aMoveReadInOneBatchWithItsFirstStateKeepsTheOwnerDriving() throws {
        let r = try ClassroomReceiver(["--accept", "first", "--failsafe-ms", "5000"])
        let ann = try ClassroomPeer(port: r.port)
        try ann.say(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "", session: "")))
        #expect(try ann.pump { $0.contains { if case .accept = $0 { true } else { false } } })
        ann.adoptConnection()
        try ann.send(.neutral)
        try ann.send(ControllerState(angle: 0, buttons: .forward))
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap })

        // The same controller from another socket (another source port: a new address to the
        // receiver), queued while the receiver cannot read, so both arrive in one batch.
        let moved = try ClassroomPeer(port: r.port)
        moved.channel = ann.channel
        var paused = r.process.pause()
        defer { if paused { r.process.signal(SIGCONT) } }
        #expect(paused, "the receiver did not stop")
        try moved.send(raw: moved.channel.unreliable(.ping(id: 1, sentNanos: 1)))
        let backward = ControllerState(angle: 0, buttons: .backward)
        try moved.send(backward)
        r.process.signal(SIGCONT)
        paused = false

        let backwardMap = ClassroomReceiver.kitMap(left: 0x40, right: 0xC0)
        #expect(r.waitForMap { $0 == backwardMap }, "the moved controller's first state drives: \(r.process.stderr)")
        #expect(r.process.waitForOutput { _, err in err.contains("the driving controller moved to a new address: still the owner") },
                "\(r.process.stderr)")
        let s = try r.stop()
        #expect(!r.process.stderr.contains("ignoring controller"), "\(r.process.stderr)")
        #expect(!r.process.stderr.contains("FAILSAFE"), "\(r.process.stderr)")
        #expect(s["ignored"] == 0, "\(s)")
    }
}
