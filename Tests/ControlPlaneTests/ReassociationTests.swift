import ControlPlane
import ControlWire
import RemoteWire
import Testing

/// One address per receiver (Protocol.md §6.4): a controller that moves to another address of
/// the receiver keeps its connection, and the receiver recognises it by that connection — the
/// owner stays the owner and the failsafe never trips.
@Suite struct ReassociationTests {
    let t0 = ContinuousClock.now

    func plane() -> ControlPlane<String> {
        var s = ClassroomSettings()
        s.accept = .first
        s.displayName = "robot-1"
        return ControlPlane(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
    }

    @Test func aPingFromANewAddressWithTheConnectionOfAnAcceptedControllerMovesIt() {
        var p = plane()
        var ann = FakeController()
        var out = ControlPlaneTests().feed(&p, ann.send(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "", session: ""))),
                                           from: "fe80::1%eth0:50000")
        ann.take(out.datagrams.map(\.1))
        #expect(out.effects == [.accepted("fe80::1%eth0:50000", name: "Ann")])
        // The controller moves to the receiver's IPv4 address: another socket, same channel.
        out = p.control(ann.channel.unreliable(.ping(id: 7, sentNanos: 1)), from: "198.18.0.9:50001", now: t0, unixMillis: 0)
        #expect(out.effects == [.moved(from: "fe80::1%eth0:50000", to: "198.18.0.9:50001", name: "Ann")])
        #expect(p.displayName(of: "198.18.0.9:50001") == "Ann")
        #expect(p.displayName(of: "fe80::1%eth0:50000") == nil)
        #expect(p.peers.hasChannel("198.18.0.9:50001") && !p.peers.hasChannel("fe80::1%eth0:50000"))
        // The pong goes to the new address, and the channel goes on where it was (a bye is its
        // second reliable message: delivered, not taken for a restart).
        #expect(out.datagrams.map(\.0) == ["198.18.0.9:50001"])
        let bye = ControlPlaneTests().feed(&p, ann.send(.bye), from: "198.18.0.9:50001")
        #expect(bye.effects == [.left("198.18.0.9:50001", name: "Ann")])
    }

    @Test func anotherConnectionFromANewAddressIsANewController() {
        var p = plane()
        var ann = FakeController()
        _ = ControlPlaneTests().feed(&p, ann.send(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "", session: ""))),
                                     from: "A")
        var bob = FakeController(channel: ReliableChannel(connection: 0xB0B))
        let out = ControlPlaneTests().feed(&p, bob.send(.hello(.init(peerID: 2, displayName: "Bob", pairingCode: "", session: ""))),
                                           from: "B")
        #expect(out.effects == [.accepted("B", name: "Bob")])
        #expect(p.displayName(of: "A") == "Ann")
    }
}
