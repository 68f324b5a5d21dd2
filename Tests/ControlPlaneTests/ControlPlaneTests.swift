import ControlPlane
import ControlWire
import RemoteWire
import Testing

/// A controller's side for tests: a reliable channel, fed what the plane sends it.
struct FakeController {
    var channel = ReliableChannel(connection: 0xC0C0)
    var delivered: [ControlMessage] = []
    var restarts = 0

    mutating func send(_ message: ControlMessage) -> [[UInt8]] {
        try? channel.send(message)
        return channel.poll(now: .now).datagrams
    }

    mutating func take(_ datagrams: [[UInt8]]) {
        for bytes in datagrams {
            guard let d = try? ControlDatagram.decode(bytes) else { continue }
            // After the accept, only datagrams with our connection id (as the real controller).
            if channel.connectionID != 0, d.header.connectionID != channel.connectionID { continue }
            for event in channel.receive(d, now: .now) {
                switch event {
                case .delivered(let m):
                    delivered.append(m)
                    if case .accept = m { channel.connectionID = d.header.connectionID }
                case .peerRestarted: restarts += 1
                default: break
                }
            }
        }
    }
}

@Suite struct ControlPlaneTests {
    let t0 = ContinuousClock.now

    func plane(_ accept: AcceptMode = .paired, key: String? = nil, session: String = "") -> ControlPlane<String> {
        var s = ClassroomSettings()
        s.accept = accept
        s.pairingCode = "4711"
        s.teacherKey = key.map { TeacherKey(macKey: Array($0.utf8)) }
        s.session = session
        s.displayName = "robot-1"
        s.failsafe = FailsafeTimeout(milliseconds: 300)
        s.peerID = 42
        return ControlPlane(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
    }

    func feed(_ p: inout ControlPlane<String>, _ datagrams: [[UInt8]], from: String = "C") -> ControlPlane<String>.Output {
        var out = ControlPlane<String>.Output()
        for d in datagrams {
            let o = p.control(d, from: from, now: t0, unixMillis: 1_795_000_000_000)
            out.datagrams += o.datagrams
            out.effects += o.effects
        }
        let polled = p.poll(now: t0)
        out.datagrams += polled.datagrams
        return out
    }

    static func to(_ source: String, _ out: ControlPlane<String>.Output) -> [[UInt8]] {
        out.datagrams.filter { $0.0 == source }.map(\.1)
    }

    @Test func pairedDeniesAPlainSenderOnceASecondWithoutBreakingALaterHello() throws {
        var p = plane()
        #expect(!p.mayDrive("C"))
        let first = p.refusedState(from: "C", now: t0)
        let bytes = try #require(Self.to("C", first).first)
        let d = try ControlDatagram.decode(bytes)
        #expect(d.header.type == .deny && d.header.connection == 0xBBBB && d.header.sequence == 1)
        let deny = try ControlMessage.decode(type: .deny, payload: d.payload)
        guard case .deny(let reason) = deny else { Issue.record("not a deny"); return }
        #expect(reason.reason == .pairingRequired && reason.text.text.contains("--pair"))
        #expect(p.refusedState(from: "C", now: t0 + .milliseconds(999)).datagrams.isEmpty)
        #expect(p.refusedState(from: "C", now: t0 + .milliseconds(1000)).datagrams.count == 1)

        // The same source then says hello with the code: the accept is delivered although the
        // one-shot deny used sequence 1 too (another connection id: a restart, not a duplicate).
        var c = FakeController()
        c.take([bytes])
        let out = feed(&p, c.send(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "4711"))))
        #expect(out.effects == [.accepted("C", name: "Ann")])
        c.take(Self.to("C", out))
        #expect(c.delivered.count == 2)
        #expect(c.delivered.last == .accept(.init(peerID: 42, displayName: "robot-1", failsafeMilliseconds: 300, rateHertz: 50)))
        #expect(p.mayDrive("C") && p.displayName(of: "C") == "Ann")
        #expect(p.refusedState(from: "C", now: t0 + .seconds(5)).datagrams.isEmpty)
    }

    @Test func wrongCodeIsDeniedReliablyAndByeLeaves() {
        var p = plane()
        var c = FakeController()
        let out = feed(&p, c.send(.hello(.init(peerID: 1, displayName: "Bob", pairingCode: "1111"))))
        c.take(Self.to("C", out))
        guard case .deny(let d)? = c.delivered.first else { Issue.record("no deny: \(c.delivered)"); return }
        #expect(d.reason == .wrongPairingCode)
        #expect(!p.mayDrive("C"))

        var ann = FakeController()
        ann.take(Self.to("A", feed(&p, ann.send(.hello(.init(peerID: 2, displayName: "Ann", pairingCode: "4711"))), from: "A")))
        let bye = feed(&p, ann.send(.bye), from: "A")
        #expect(bye.effects == [.left("A", name: "Ann")])
        #expect(!p.mayDrive("A"))
    }

    /// Issue 19, item 2: the accept carries a connection id (version-2 header, never 0, not the
    /// same twice); a `bye` from the owner's own address without it — any other id, or none, any
    /// sequence — changes nothing and is counted. Only the controller's own bye frees the robot.
    @Test(arguments: [UInt64(0), 1, 0xDEAD_BEEF])
    func aForgedByeFromTheOwnersAddressChangesNothing(forgedID: UInt64) throws {
        var p = plane()
        var ann = FakeController()
        let accepted = feed(&p, ann.send(.hello(.init(peerID: 2, displayName: "Ann", pairingCode: "4711"))), from: "A")
        ann.take(Self.to("A", accepted))
        let id = ann.channel.connectionID
        #expect(id != 0 && p.connectionID(of: "A") == id)
        let acceptHeader = try ControlDatagram.decode(try #require(Self.to("A", accepted).first)).header
        #expect(acceptHeader.type == .accept && acceptHeader.connectionID == id)

        // The forger knows the address, the sender instance and the sequence, not the id.
        for sequence: UInt32 in [1, 2, 3, 1000] {
            let forged = ControlDatagram(header: ControlHeader(type: .bye, connection: ann.channel.connection, sequence: sequence,
                                                               connectionID: forgedID == 0 ? 0 : (forgedID == id ? id &+ 1 : forgedID)),
                                         payload: []).encode()
            let out = feed(&p, [forged], from: "A")
            #expect(out.effects.isEmpty, "forged bye (seq \(sequence)) had an effect: \(out.effects)")
            #expect(p.mayDrive("A") && p.displayName(of: "A") == "Ann")
        }
        #expect(p.peers.wrongConnection == 4)
        // The real bye still works.
        #expect(feed(&p, ann.send(.bye), from: "A").effects == [.left("A", name: "Ann")])
        // Connection ids differ per controller (64 random bits each).
        var bob = FakeController()
        bob.take(Self.to("B", feed(&p, bob.send(.hello(.init(peerID: 3, displayName: "Bob", pairingCode: "4711"))), from: "B")))
        #expect(bob.channel.connectionID != 0 && bob.channel.connectionID != id)
    }

    @Test func firstModeAcceptsAnyHelloAndPlainSenders() {
        var p = plane(.first)
        #expect(p.mayDrive("X"))
        #expect(p.refusedState(from: "X", now: t0).datagrams.isEmpty)
        var c = FakeController()
        #expect(feed(&p, c.send(.hello(.init(peerID: 1, displayName: "Ann")))).effects == [.accepted("C", name: "Ann")])
    }

    @Test func pingIsAnsweredAtOnceWithThePayloadUnchanged() throws {
        var p = plane(.first)
        let ping = ControlDatagram(header: ControlHeader(type: .ping, connection: 9),
                                   payload: ControlMessage.ping(id: 7, sentNanos: 123).encodePayload()[...]).encode()
        let out = p.control(ping, from: "C", now: t0, unixMillis: 0)
        let reply = try ControlDatagram.decode(try #require(Self.to("C", out).first))
        #expect(reply.header.type == .pong)
        #expect(try ControlMessage.decode(type: .pong, payload: reply.payload) == .pong(id: 7, sentNanos: 123))
    }

    func stopAll(_ action: ControlMessage.StopAll.Action, millis: UInt64 = 1_795_000_000_000, nonce: UInt64 = 1,
                 session: String = "class", key: String? = nil) -> [UInt8] {
        var s = ControlMessage.StopAll(action: action, unixMillis: millis, nonce: nonce, session: WireText(session))
        if let key { s.sign(key: Array(key.utf8)) }
        return ControlDatagram(header: ControlHeader(type: .stopAll, connection: 5), payload: ControlMessage.stopAll(s).encodePayload()[...]).encode()
    }

    func reply(_ out: ControlPlane<String>.Output) throws -> ControlMessage.StopAllReply {
        let d = try ControlDatagram.decode(try #require(Self.to("T", out).first))
        guard case .stopAllReply(let r) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            throw PlaneTestError()
        }
        return r
    }
    struct PlaneTestError: Error {}

    @Test func stopAllIsAnsweredTakenRepeatedRefusedAndReleased() throws {
        var p = plane(.first, key: "secret", session: "class")
        let wrong = p.control(stopAll(.stop, key: "nope"), from: "T", now: t0, unixMillis: 1_795_000_000_000)
        #expect(try reply(wrong).outcome == .refused && reply(wrong).text.text.contains("teacher key"))
        #expect(wrong.effects == [.stopRefused("T", "stop-all with a wrong teacher key (MAC mismatch)")])
        #expect(!p.holding)

        let stop = p.control(stopAll(.stop, key: "secret"), from: "T", now: t0, unixMillis: 1_795_000_000_000)
        #expect(stop.effects == [.teacher(stop: true, from: "T")])
        // Signed with the teacher key (Protocol.md §7.6): a forged "stopped" is told apart.
        var expected = ControlMessage.StopAllReply(nonce: 1, outcome: .stopped, displayName: "robot-1")
        expected.sign(key: Array("secret".utf8))
        let stopReply = try reply(stop)
        #expect(stopReply == expected && stopReply.verify(key: Array("secret".utf8)) && !stopReply.verify(key: Array("nope".utf8)))
        let again = p.control(stopAll(.stop, key: "secret"), from: "T", now: t0, unixMillis: 1_795_000_000_100)
        let repeated = try reply(again)
        #expect(again.effects.isEmpty && repeated.outcome == .stopped)

        let otherSession = p.control(stopAll(.release, millis: 1_795_000_001_000, nonce: 2, session: "other", key: "secret"),
                                     from: "T", now: t0, unixMillis: 1_795_000_001_000)
        #expect(try reply(otherSession).outcome == .refused)
        #expect(p.holding)
        let release = p.control(stopAll(.release, millis: 1_795_000_001_000, nonce: 3, key: "secret"),
                                from: "T", now: t0, unixMillis: 1_795_000_001_000)
        #expect(release.effects == [.teacher(stop: false, from: "T")])
        #expect(try reply(release).outcome == .released)
        #expect(!p.peers.hasChannel("T"), "a stop-all sender is not a peer")
    }

    @Test func aReceiverInNoSessionTakesAnySessionsStopAll() {
        var p = plane(.first)
        let stop = p.control(stopAll(.stop, session: "whatever"), from: "T", now: t0, unixMillis: 1_795_000_000_000)
        #expect(stop.effects == [.teacher(stop: true, from: "T")])
    }

    @Test func theRateLimitCountsWhatItDrops() {
        var p = plane(.first)
        let admitted = (0..<250).filter { _ in p.admit("F", now: t0) }.count
        #expect(admitted == 200)
        #expect(p.peers.limited == 50)
        #expect(p.statusParts == ["limited 50"])
        let owner = p.admit("owner", now: t0)
        #expect(owner, "another source has its own bucket")
    }
}
