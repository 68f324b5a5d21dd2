import ControlPlane
import ControlWire
import RemoteWire
import StopAll
import SystemIO
import Testing

/// The stop before any lookup (Protocol.md §7.6): signed for the session, to every host on the
/// links, and each receiver that takes it counted once however else it is reached.
@Suite struct BroadcastStopTests {
    let v4 = "198.18.255.255:27183"
    let v6 = "[::1]:27183"          // stands in for ff02::1 on an interface: the machine only aims at it
    let robot1 = try! SocketAddress.resolve("198.18.0.2:27183")
    let robot1v6 = try! SocketAddress.resolve("[fe80::2%1]:27183")
    let robot2 = try! SocketAddress.resolve("198.18.0.3:27183")
    let id1 = RobotID("k3m9x2ab")!
    let id2 = RobotID("p7q2w4z9")!

    static func destinations(_ actions: [StopAllMachine<CountingRandom>.Action]) -> [String] {
        actions.compactMap { if case .send(_, let to) = $0 { return "\(to)" } else { return nil } }
    }

    @Test func theFirstDatagramsAreTheSignedSessionStopToEveryLinkThreeTimes() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k", broadcast: [v4, v6])
        let first = rig.tick(0)
        #expect(Self.destinations(first) == ["198.18.255.255:27183", "[::1]:27183"], "before any lookup, nothing else: \(first)")
        let sent = StopAllRig.sent(first)
        #expect(sent.allSatisfy { $0.action == .stop && $0.target.isEmpty && $0.session == "class-3b" && $0.verify(key: Array("k".utf8)) })
        #expect(Set(sent.map(\.nonce)).count == 1)
        let all = first + rig.runToEnd(from: 0)
        let stops = StopAllRig.sent(all)
        #expect(stops.count == 6, "three times to each destination")
        #expect(StopAllRig.prints(all) == ["reached 0 of 0 receivers"])
        #expect(all.last == .finish(.noReceivers))
    }

    /// Taken by broadcast: counted and named from the signed reply; refusals (another session),
    /// unsigned replies and the same robot again (its IPv6 answer, DNS-SD listing it) never add one.
    @Test func eachRobotThatTookTheBroadcastCountsOnceAndNothingElseCounts() throws {
        let rig = try StopAllRig(peers: [], browseMs: 1000, teacherKey: "k", broadcast: [v4, v6])
        let nonce = try #require(StopAllRig.sent(rig.tick(0)).first?.nonce)
        var lines = StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "robot1", text: "id:\(id1)", signedWith: "k"),
                                                           from: robot1), 2))
        #expect(lines == ["stopped \"robot1\" 198.18.0.2:27183"])
        lines += StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "robot1", text: "id:\(id1)", signedWith: "k"),
                                                        from: robot1v6), 3))
        lines += StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .refused, name: "robot1",
                                                                         text: "stop-all for session \"class-3b\", ours is \"class-3c\"",
                                                                         signedWith: "k"), from: robot2), 3))
        lines += StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "forged", text: "id:\(id2)"), from: robot2), 4))
        lines += StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "other key", text: "id:\(id2)",
                                                                         signedWith: "not-k"), from: robot2), 4))
        #expect(lines == ["stopped \"robot1\" 198.18.0.2:27183"])
        // DNS-SD lists it later, at its IPv6 address: the same robot, nothing more sent to it.
        _ = rig.handle(.browsed([.init(label: "robot1", identity: "robot1", address: robot1v6, robot: id1)]), 300)
        let rest = rig.runToEnd(from: 300)
        #expect(!StopAllRig.sent(rest).contains { $0.target == "id:\(id1)" }, "it took the stop already")
        #expect(StopAllRig.prints(rest) == ["reached 1 of 1 receiver"])
        #expect(rest.last == .finish(.everyReceiverTookIt))
        #expect(rig.machine.heard == [KnownReceivers.Entry(address: robot1, robot: id1)])
    }

    /// DNS-SD first: the unicast stop goes out; the broadcast's answer then counts for it, its
    /// repeats stop, and its own reply to the unicast is not said twice.
    @Test func aListedRobotThatAnswersTheBroadcastIsNotSentMore() throws {
        let rig = try StopAllRig(peers: [], browseMs: 1000, teacherKey: "k", broadcast: [v4])
        let nonce = try #require(StopAllRig.sent(rig.tick(0)).first?.nonce)
        _ = rig.handle(.browsed([.init(label: "robot2", identity: "robot2", address: robot2, robot: id2)]), 20)
        let unicast = StopAllRig.sent(rig.tick(20))
        #expect(unicast.map(\.target) == ["id:\(id2)"])
        let lines = StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "robot2", text: "id:\(id2)", signedWith: "k"),
                                                           from: robot2), 22))
        #expect(lines == ["stopped \"robot2\" 198.18.0.3:27183"])
        let rest = rig.runToEnd(from: 22, replies: [30: [.datagram(StopAllRig.reply(unicast[0].nonce, .stopped, name: "robot2", text: "id:\(id2)",
                                                                                     signedWith: "k"), from: robot2)]])
        #expect(!StopAllRig.sent(rest).contains { $0.nonce == unicast[0].nonce }, "no repeat after the broadcast was answered")
        #expect(StopAllRig.prints(rest) == ["reached 1 of 1 receiver"])
    }

    /// Heard by broadcast at its IPv4 address, then listed without `robot=` at another address:
    /// it gets the unicast stop, and when its reply names the same robot id it is one robot.
    @Test func aRobotHeardByBroadcastAndByItsUnannouncedListingCountsOnce() throws {
        let rig = try StopAllRig(peers: [], browseMs: 1000, teacherKey: "k", broadcast: [v4])
        let nonce = try #require(StopAllRig.sent(rig.tick(0)).first?.nonce)
        _ = rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: "robot1", text: "id:\(id1)", signedWith: "k"), from: robot1), 2)
        _ = rig.handle(.browsed([.init(label: "robot1", identity: "robot1", address: robot1v6)]), 200)
        let unicast = StopAllRig.sent(rig.tick(200).filter { if case .send(_, let to) = $0 { to == robot1v6 } else { false } })
        #expect(unicast.map(\.target) == [""], "listed without an id at another address: reached as listed")
        let rest = rig.runToEnd(from: 200, replies: [205: [.datagram(StopAllRig.reply(unicast[0].nonce, .stopped, name: "robot1", text: "id:\(id1)",
                                                                                       signedWith: "k"), from: robot1v6)]])
        #expect(StopAllRig.prints(rest) == ["reached 1 of 1 receiver"])
    }

    @Test func noBroadcastForAReleaseNorForReceiversNamedByAddress() throws {
        let release = try StopAllRig(peers: [], browseMs: 500, teacherKey: "k", release: true, broadcast: [v4, v6])
        #expect(release.tick(0).isEmpty)
        let peers = try StopAllRig(peers: ["127.0.0.1:45678"], teacherKey: "k", broadcast: [v4, v6])
        #expect(Self.destinations(peers.tick(0)) == ["127.0.0.1:45678"])
    }

    /// Under `--robot`, one broadcast stop per robot id, aimed at it; any other robot's answer is
    /// nothing to this run.
    @Test func underRobotTheBroadcastIsAimedAtEachID() throws {
        let rig = try StopAllRig(peers: [], browseMs: 500, teacherKey: "k", robots: [id1], broadcast: [v4])
        let sent = StopAllRig.sent(rig.tick(0))
        #expect(sent.map(\.target) == ["id:\(id1)"])
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(sent[0].nonce, .stopped, name: "robot2", text: "id:\(id2)", signedWith: "k"),
                                                       from: robot2), 3)).isEmpty)
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(sent[0].nonce, .stopped, name: "robot1", text: "id:\(id1)", signedWith: "k"),
                                                       from: robot1), 3)) == ["stopped \"robot1\" 198.18.0.2:27183"])
        #expect(rig.runToEnd(from: 3).last == .finish(.everyReceiverTookIt))
    }
}

/// Robots cloned after their first start share a robot id: each still counts, and a clone that
/// only DNS-SD can reach (another port) still gets its stop.
@Suite struct BroadcastStopClonesTests {
    let v4 = "198.18.255.255:27183"
    let id = RobotID("k3m9x2ab")!

    @Test func clonesWithOneRobotIDAreCountedByAddressAndName() throws {
        let rig = try StopAllRig(peers: [], browseMs: 1000, teacherKey: "k", broadcast: [v4])
        let nonce = try #require(StopAllRig.sent(rig.tick(0)).first?.nonce)
        let one = try SocketAddress.resolve("198.18.0.2:27183"), oneV6 = try SocketAddress.resolve("[fe80::2%1]:27183")
        let two = try SocketAddress.resolve("198.18.0.3:27183")
        let other = try SocketAddress.resolve("198.18.0.4:40001")
        var lines: [String] = []
        for (name, from) in [("robot1", oneV6), ("robot2", two), ("robot1", one)] {
            lines += StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(nonce, .stopped, name: name, text: "id:\(id)", signedWith: "k"),
                                                            from: from), 3))
        }
        #expect(lines == ["stopped \"robot1\" [fe80::2%lo]:27183", "stopped \"robot2\" 198.18.0.3:27183"])
        // DNS-SD: robot1 at its IPv4 address (the same), and robot3 on a port of its own (not heard).
        _ = rig.handle(.browsed([.init(label: "robot1", identity: "robot1", address: one, robot: id),
                                 .init(label: "robot3", identity: "robot3", address: other, robot: id)]), 200)
        let unicast = rig.tick(200).filter { if case .send(_, let to) = $0 { to == other } else { false } }
        #expect(StopAllRig.sent(unicast).map(\.target) == ["id:\(id)"], "the clone on another port gets its stop")
        let rest = rig.runToEnd(from: 200, replies: [210: [.datagram(StopAllRig.reply(StopAllRig.sent(unicast)[0].nonce, .stopped, name: "robot3",
                                                                                       text: "id:\(id)", signedWith: "k"), from: other)]])
        #expect(StopAllRig.prints(rest) == ["stopped \"robot3\" 198.18.0.4:40001", "reached 3 of 3 receivers"])
    }
}
