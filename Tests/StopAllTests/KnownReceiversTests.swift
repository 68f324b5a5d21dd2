import ControlPlane
import ControlWire
import RemoteWire
import StopAll
import SystemIO
import Testing

/// The receivers that took the last stop-all of a session get the next one before DNS-SD has
/// listed anything, and count only once they answer or are listed.
@Suite struct KnownReceiversTests {
    let robot1 = try! SocketAddress.resolve("127.0.0.1:45678")
    let robot2 = try! SocketAddress.resolve("127.0.0.1:45679")
    let idX = RobotID("k3m9x2ab")!
    let idY = RobotID("q7w8e9r2")!

    /// Runs the machine to its end, answering nothing more; returns the printed lines and the result.
    func finish(_ rig: StopAllRig, from ms: Int) -> ([String], StopAllMachine<CountingRandom>.Action?) {
        var lines: [String] = []
        var last: StopAllMachine<CountingRandom>.Action?
        var now = ms
        while let next = rig.machine.nextDeadline {
            now = max(now, Int((next - rig.start) / .milliseconds(1)))
            let actions = rig.tick(now)
            lines += StopAllRig.prints(actions)
            if let end = actions.last, case .finish = end { last = end }
        }
        return (lines, last)
    }

    @Test func theKnownReceiversGetTheSignedStopAtOnceBeforeAnyListing() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k",
                                 known: [.init(address: robot1, robot: idX), .init(address: robot2, robot: nil)])
        #expect(rig.machine.opening.isEmpty, "no 'looking for' while stops are going out")
        let sent = StopAllRig.sent(rig.tick(0))
        #expect(sent.map(\.action) == [.stop, .stop])
        #expect(sent.map(\.target) == ["id:k3m9x2ab", ""], "aimed at the robot id the last run's signed reply gave, else a stop for the session")
        #expect(sent.allSatisfy { $0.verify(key: Array("k".utf8)) && $0.session == "class-3b" })
    }

    /// The same robot, answering and then listed by DNS-SD: one stop line, counted once. A known
    /// address that neither answers nor is listed (the robot left the class) is not counted and
    /// not reported as silent.
    @Test func aKnownReceiverIsCountedOnceAndAGoneOneNotAtAll() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k",
                                 known: [.init(address: robot1, robot: idX), .init(address: robot2, robot: idY)])
        let sent = StopAllRig.sent(rig.tick(0))
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(sent[0].nonce, .stopped, name: "robot1", text: "id:k3m9x2ab",
                                                                         signedWith: "k"), from: robot1), 3))
                == ["stopped \"robot1\" 127.0.0.1:45678"])
        _ = rig.handle(.browsed([.init(label: "robot1", identity: "robot1 [s]", address: robot1, robot: idX)]), 40)
        #expect(StopAllRig.sent(rig.tick(40)).allSatisfy { $0.target == "id:k3m9x2ab" ? false : true }, "robot1 was stopped again")
        #expect(rig.machine.heard == [.init(address: robot1, robot: idX)])
        let (lines, end) = finish(rig, from: 40)
        #expect(lines == ["reached 1 of 1 receiver"])
        #expect(end == .finish(.everyReceiverTookIt))
    }

    /// A known robot listed at another address (its DHCP lease changed) is reached there; a known
    /// address that DNS-SD now lists as another robot gets that robot's own stop, and the old
    /// robot's refusal from it changes nothing.
    @Test func aListingWinsOverWhatIsKnown() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k",
                                 known: [.init(address: robot1, robot: idX), .init(address: robot2, robot: idY)])
        let first = StopAllRig.sent(rig.tick(0))
        let moved = try SocketAddress.resolve("127.0.0.1:45680")
        let robotZ = RobotID("zz3m9x2a")!
        _ = rig.handle(.browsed([.init(label: "robot X", identity: "x", address: moved, robot: idX),
                                 .init(label: "robot Z", identity: "z", address: robot2, robot: robotZ)]), 20)
        let actions = rig.tick(20)
        let again = actions.compactMap { a -> (String, SocketAddress)? in
            guard case .send(let bytes, let to) = a, let d = try? ControlDatagram.decode(bytes),
                  case .stopAll(let m)? = try? ControlMessage.decode(type: .stopAll, payload: d.payload) else { return nil }
            return (m.target.text, to)
        }
        #expect(again.contains { $0 == ("id:k3m9x2ab", moved) }, "\(again)")
        #expect(again.contains { $0 == ("id:zz3m9x2a", robot2) }, "\(again)")
        #expect(!again.contains { $0.0 == "id:q7w8e9r2" }, "the robot that is no longer there got more stops")
        // Y's stop, refused by Z (wrong target): nothing printed, nothing counted.
        let refusedY = StopAllRig.reply(first[1].nonce, .refused, name: "robot Z", text: "not for this robot", signedWith: "k")
        #expect(rig.handle(.datagram(refusedY, from: robot2), 25).isEmpty)
        let z = StopAllRig.sent(actions).first { $0.target == "id:zz3m9x2a" }!
        let x = StopAllRig.sent(actions).first { $0.target == "id:k3m9x2ab" }!
        _ = rig.handle(.datagram(StopAllRig.reply(z.nonce, .stopped, name: "robot Z", text: "id:zz3m9x2a", signedWith: "k"), from: robot2), 30)
        _ = rig.handle(.datagram(StopAllRig.reply(x.nonce, .stopped, name: "robot X", text: "id:k3m9x2ab", signedWith: "k"), from: moved), 31)
        let (lines, end) = finish(rig, from: 31)
        #expect(lines == ["reached 2 of 2 receivers"])
        #expect(end == .finish(.everyReceiverTookIt))
        #expect(Set(rig.machine.heard.map { "\($0.robot!) \($0.address)" }) == ["k3m9x2ab 127.0.0.1:45680", "zz3m9x2a 127.0.0.1:45679"])
    }

    /// With a teacher key, only a signed reply makes a receiver known for the next run: a reply
    /// without the key's signature (forged, or another key) is not kept.
    @Test func onlyASignedReplyIsKeptForTheNextRun() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k")
        _ = rig.handle(.browsed([.init(label: "a", identity: "a", address: robot1, robot: idX),
                                 .init(label: "b", identity: "b", address: robot2, robot: idY)]), 10)
        let sent = StopAllRig.sent(rig.tick(10))
        _ = rig.handle(.datagram(StopAllRig.reply(sent[0].nonce, .stopped, name: "a", text: "id:k3m9x2ab", signedWith: "k"), from: robot1), 12)
        _ = rig.handle(.datagram(StopAllRig.reply(sent[1].nonce, .stopped, name: "b", text: "id:q7w8e9r2", signedWith: "other"), from: robot2), 13)
        #expect(rig.machine.heard == [.init(address: robot1, robot: idX)])
    }

    @Test func theFileKeepsAddressesAndIDsAndNothingElse() throws {
        let v6 = try #require(SocketAddress(addressBytes: [0xfe, 0x80] + Array(repeating: 0, count: 13) + [7], port: 27183, scopeID: 3))
        let known = KnownReceivers(session: "class-3b", entries: [.init(address: robot1, robot: idX), .init(address: v6, robot: nil)])
        let bytes = known.encoded
        #expect(String(decoding: bytes, as: UTF8.self)
                == "analog-remote stop-all v1\nsession class-3b\nk3m9x2ab 7f000001 45678 0\n- fe800000000000000000000000000007 27183 3\n")
        #expect(KnownReceivers.parse(bytes, session: "class-3b") == known)
        #expect(KnownReceivers.parse(bytes, session: "class-3c").entries.isEmpty, "another session's file")
        let damaged = Array("analog-remote stop-all v1\nsession class-3b\nK3M9X2AB 7f000001 45678 0\nk3m9x2ab 7f0000 1 0\n=cmd 7f000001 1 0\nk3m9x2ab 7f000001 0 0\nq7w8e9r2 7f000001 45679 0\n".utf8)
        #expect(KnownReceivers.parse(damaged, session: "class-3b").entries == [.init(address: robot2, robot: idY)])
        #expect(KnownReceivers.fileName(session: "class-3b").hasPrefix("stop-all-") && !KnownReceivers.fileName(session: "../x").contains("/"))
        #expect(KnownReceivers(session: "a\nb", entries: []).encoded.isEmpty)
    }

    /// Whatever lies in the state directory (a truncated write, random bytes, a file of another
    /// program, one far over the limit) parses without a crash into at most the limit of entries,
    /// each an address with a port: the worst it does is send a stop to a wrong address.
    @Test func garbageInTheFileIsNeverMoreThanAListOfAddresses() throws {
        var generator = SystemRandomNumberGenerator()
        let header = Array("analog-remote stop-all v1\nsession class-3b\n".utf8)
        for round in 0..<500 {
            let length = Int.random(in: 0...600, using: &generator)
            let noise = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let bytes = round % 2 == 0 ? header + noise : noise
            let parsed = KnownReceivers.parse(bytes, session: "class-3b")
            #expect(parsed.entries.count <= KnownReceivers.limit)
            #expect(parsed.entries.allSatisfy { $0.address.port != 0 })
        }
        let line = "k3m9x2ab 7f000001 45678 0\n"
        let huge = header + Array(String(repeating: line, count: 10_000).utf8)
        #expect(KnownReceivers.parse(huge, session: "class-3b").entries.count == 1, "one address, however often it is listed")
        var many = header
        for port in 1...1_000 { many += Array("- 7f000001 \(port) 0\n".utf8) }
        #expect(KnownReceivers.parse(many, session: "class-3b").entries.count == KnownReceivers.limit)
    }
}
