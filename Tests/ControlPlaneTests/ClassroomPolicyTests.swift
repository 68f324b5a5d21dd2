import ControlPlane
import ControlWire
import RemoteWire
import Testing

@Suite struct TokenBucketTests {
    @Test func allowsBurstThenRate() {
        var bucket = TokenBucket(rate: 100, burst: 10)
        let t0 = ContinuousClock.now
        let first = (0..<20).filter { _ in bucket.take(now: t0) }.count
        #expect(first == 10)
        // 100/s: 50 ms later five more tokens.
        let later = (0..<20).filter { _ in bucket.take(now: t0 + .milliseconds(50)) }.count
        #expect(later == 5)
    }

    @Test func aFloodCannotSaveUpMoreThanTheBurst() {
        var bucket = TokenBucket(rate: 400, burst: 100)
        let t0 = ContinuousClock.now
        _ = bucket.take(now: t0)
        let saved = (0..<1000).filter { _ in bucket.take(now: t0 + .seconds(60)) }.count
        #expect(saved == 100)
    }
}

@Suite struct AdmissionTests {
    let t0 = ContinuousClock.now

    @Test func firstAndAnyAdmitPlainSenders() {
        for mode in [AcceptMode.first, .any] {
            var a = Admission<Int>(mode: mode, pairingCode: "1234")
            #expect(a.mayDrive(7))
            let deny = a.denyForStatePacket(from: 7, now: t0)
            #expect(deny == nil)
        }
    }

    @Test func pairedDeniesPlainSendersOncePerSecondWithAReason() throws {
        var a = Admission<Int>(mode: .paired, pairingCode: "1234")
        #expect(!a.mayDrive(7))
        let first = a.denyForStatePacket(from: 7, now: t0)
        let deny = try #require(first)
        #expect(deny.reason == .pairingRequired)
        #expect(deny.text.text.contains("--pair"))
        let soon = a.denyForStatePacket(from: 7, now: t0 + .milliseconds(500))
        let later = a.denyForStatePacket(from: 7, now: t0 + .milliseconds(1001))
        #expect(soon == nil)
        #expect(later != nil)
    }

    @Test func pairedChecksTheCode() {
        var a = Admission<Int>(mode: .paired, pairingCode: "1234")
        let noCode = a.hello(.init(peerID: 1, displayName: "Ann"), from: 1)
        #expect(noCode == .deny(.init(reason: .pairingRequired, text: "this robot needs a pairing code: start the controller with --pair CODE (the code is on the robot's screen)")))
        guard case .deny(let d) = a.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "9999"), from: 1) else {
            Issue.record("wrong code accepted"); return
        }
        #expect(d.reason == .wrongPairingCode)
        let right = a.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "1234"), from: 1)
        #expect(right == .accept)
        #expect(a.mayDrive(1) && !a.mayDrive(2))
        #expect(a.displayName(of: 1) == "Ann")
        a.bye(from: 1)
        #expect(!a.mayDrive(1))
    }

    @Test func wrongSessionIsDenied() {
        var a = Admission<Int>(mode: .first, pairingCode: "", session: "class-3b")
        guard case .deny(let d) = a.hello(.init(peerID: 1, displayName: "x", session: "class-3a"), from: 1) else {
            Issue.record("accepted"); return
        }
        #expect(d.reason == .wrongSession)
    }

    @Test func rememberedSourcesAreBounded() {
        var a = Admission<Int>(mode: .paired, pairingCode: "1")
        for i in 0..<5000 { _ = a.hello(.init(peerID: UInt64(i), displayName: "p", pairingCode: "1"), from: i) }
        #expect(a.accepted.count <= Admission<Int>.capacity)
    }
}

@Suite struct StopAllGuardTests {
    let now: UInt64 = 1_795_000_000_000

    func command(_ action: ControlMessage.StopAll.Action, at millis: UInt64, nonce: UInt64 = 1, session: String = "s", key: String? = nil) -> ControlMessage.StopAll {
        var s = ControlMessage.StopAll(action: action, unixMillis: millis, nonce: nonce, session: WireText(session))
        if let key { s.sign(key: Array(key.utf8)) }
        return s
    }

    @Test func stopThenRepeatThenRelease() {
        var g = StopAllGuard(session: "s", teacherKey: nil)
        let stop = g.consider(command(.stop, at: now), nowUnixMillis: now)
        #expect(stop == .take(stop: true))
        #expect(g.holding)
        let again = g.consider(command(.stop, at: now), nowUnixMillis: now + 100)
        #expect(again == .repeated)
        let release = g.consider(command(.release, at: now + 5000, nonce: 2), nowUnixMillis: now + 5000)
        #expect(release == .take(stop: false))
        #expect(!g.holding)
    }

    @Test func refusesOtherSessionsStaleTimesReplaysAndBadKeys() {
        var g = StopAllGuard(session: "s", teacherKey: TeacherKey(macKey: Array("key".utf8)))
        if case .refused = g.consider(command(.stop, at: now, session: "other", key: "key"), nowUnixMillis: now) {} else { Issue.record("other session taken") }
        if case .refused = g.consider(command(.stop, at: now, key: "wrong"), nowUnixMillis: now) {} else { Issue.record("bad key taken") }
        if case .refused = g.consider(command(.stop, at: now, key: nil), nowUnixMillis: now) {} else { Issue.record("unsigned taken") }
        if case .refused = g.consider(command(.stop, at: now - 31_000, key: "key"), nowUnixMillis: now) {} else { Issue.record("stale taken") }
        let signed = g.consider(command(.release, at: now, nonce: 5, key: "key"), nowUnixMillis: now)
        #expect(signed == .take(stop: false))
        if case .refused = g.consider(command(.stop, at: now - 1000, nonce: 6, key: "key"), nowUnixMillis: now) {} else { Issue.record("older taken") }
        #expect(!g.holding)
    }
}

@Suite struct LinkQualityTests {
    @Test func roundTripAndLoss() {
        var q = LinkQuality(window: 10, timeout: .seconds(1))
        var t = ContinuousClock.now
        for i in 0..<10 {
            let id = q.pingSent(now: t)
            if i % 5 != 0 { q.pongReceived(id: id, now: t + .milliseconds(3)) }
            t += .seconds(2)
        }
        _ = q.pingSent(now: t)
        #expect(q.lastRoundTrip == .milliseconds(3))
        #expect(q.lossRate == 0.2)
    }

    @Test func unknownPongIsIgnored() {
        var q = LinkQuality()
        q.pongReceived(id: 999, now: .now)
        #expect(q.lossRate == nil && q.lastRoundTrip == nil)
    }
}
