import Classroom
import Receiver
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

    /// The engine side: the owner at its old address, then its states from the new one right
    /// after the move — every one applied, no failsafe trip, no change of owner.
    @Test func theOwnerMovedKeepsDrivingWithoutAFailsafe() {
        var engine = ReceiverEngine<String>(mapping: .kit, policy: .first, timeout: .milliseconds(250))
        _ = engine.start()
        let rest = StatePacket.encode(.neutral)
        let drive = StatePacket.encode(ControllerState(angle: 0, buttons: .a))
        var ms = 0
        for _ in 0..<10 {
            _ = engine.datagram(rest, length: 8, from: "old", at: t0 + .milliseconds(ms))
            ms += 20
        }
        _ = engine.datagram(drive, length: 8, from: "old", at: t0 + .milliseconds(ms))
        let before = engine.counters.applied
        _ = engine.moved(from: "old", to: "new", at: t0 + .milliseconds(ms + 20))
        #expect(engine.ownership.owner == "new")
        for _ in 0..<20 {
            ms += 20
            let step = engine.datagram(drive, length: 8, from: "new", at: t0 + .milliseconds(ms))
            #expect(!step.notices.contains { if case .failsafe = $0 { true } else { false } })
        }
        #expect(engine.counters.failsafeTrips == 0)
        #expect(engine.counters.applied == before + 20)
        #expect(engine.counters.ignored == 0)
        // A state from the old address now is someone else's.
        _ = engine.datagram(drive, length: 8, from: "old", at: t0 + .milliseconds(ms + 5))
        #expect(engine.counters.ignored == 1)
    }
}
