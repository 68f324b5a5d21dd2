import ControlPlane
import ControlWire
import Foundation
import PropertyBased
import RemoteWire
import TestSupport
import Testing

/// vectors/security.json (computed independently, with Python's `cryptography`): the secret's
/// words, the hello proof, the per-connection keys and the authenticated envelopes.
struct SecurityVectors: Decodable {
    struct Secret: Decodable { let bytes, words: String; let typed: [String] }
    struct BadWords: Decodable { let typed, error: String }
    struct Handshake: Decodable {
        let receiverNonce, controllerNonce, proofKey, proof, connectionId: String
        enum CodingKeys: String, CodingKey {
            case receiverNonce = "receiver_nonce", controllerNonce = "controller_nonce", proofKey = "proof_key", proof
            case connectionId = "connection_id"
        }
    }
    struct Envelope: Decodable { let name, direction: String; let counter: UInt64; let inner, hex: String }
    struct Refused: Decodable { let name, why, hex: String }
    let secret: Secret
    let badWords: [BadWords]
    let handshake: Handshake
    let envelopes: [Envelope]
    let refusedEnvelopes: [Refused]
    enum CodingKeys: String, CodingKey {
        case secret, badWords = "bad_words", handshake, envelopes, refusedEnvelopes = "refused_envelopes"
    }

    static func load() throws -> SecurityVectors {
        try JSONDecoder().decode(SecurityVectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/security.json")))
    }
}

/// A controller and a receiver's control plane (`--accept secret`) talking through values only.
struct SecretRig {
    let t0 = ContinuousClock.now
    var plane: ControlPlane<String>
    var channel = ReliableChannel(connection: 0xC0C0_C0C0)
    var session: SecretSession
    var delivered: [ControlMessage] = []

    init(secret: RobotSecret = RobotSecret(bytes: Array(0..<12)), controllerSecret: RobotSecret? = nil) {
        var s = ClassroomSettings()
        s.accept = .secret
        s.secret = secret
        s.displayName = "robot-1"
        plane = ControlPlane(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
        session = SecretSession(secret: controllerSecret ?? secret, instance: channel.connection)
    }

    /// Hands what the plane sent to "C" to the controller; returns what the controller sends back.
    mutating func controllerTakes(_ out: ControlPlane<String>.Output) -> [[UInt8]] {
        for (to, bytes) in out.datagrams where to == "C" {
            var plain = bytes
            if bytes[3] == ControlType.sealed.rawValue {
                guard let inner = session.open(bytes) else { continue }
                plain = inner
            }
            guard let d = try? ControlDatagram.decode(plain) else { continue }
            for case .delivered(let m) in channel.receive(d, now: t0) {
                delivered.append(m)
                if case .challenge(let nonce, _) = m, let proof = session.answer(challenge: nonce) { try? channel.send(proof) }
                if case .accept = m { channel.connectionID = d.header.connectionID }
            }
        }
        var reply: [[UInt8]] = []
        for d in channel.poll(now: t0).datagrams { reply.append(session.established ? session.seal(d)! : d) }
        return reply
    }

    mutating func receiverTakes(_ datagrams: [[UInt8]], at ms: Int = 0) -> ControlPlane<String>.Output {
        var out = ControlPlane<String>.Output()
        for d in datagrams {
            var bytes = d
            var sealed = false
            if ControlPlane<String>.isSealed(d) {
                let (opened, o) = plane.open(d, from: "C", now: t0)
                out.effects += o.effects
                guard case .control(let inner) = opened else { continue }
                bytes = inner
                sealed = true
            }
            let o = plane.control(bytes, from: "C", now: t0 + .milliseconds(ms), unixMillis: 0, sealed: sealed)
            out.datagrams += o.datagrams
            out.effects += o.effects
        }
        out.datagrams += plane.poll(now: t0 + .milliseconds(ms)).datagrams
        return out
    }

    /// hello → challenge → proof → accept (sealed) → the controller knows the connection.
    mutating func handshake() {
        try? channel.send(.hello(.init(peerID: 1, displayName: "Ann")))
        var toReceiver = channel.poll(now: t0).datagrams
        for _ in 0..<4 {
            let out = receiverTakes(toReceiver)
            toReceiver = controllerTakes(out)
        }
    }
}

@Suite struct SecurityTests {
    @Test func secretWordsMatchTheVectorsAndForgiveHowTheyAreTyped() throws {
        let v = try SecurityVectors.load()
        let secret = RobotSecret(bytes: try #require(Hex.bytes(v.secret.bytes)))
        #expect(secret.words == v.secret.words)
        #expect(RobotSecret.wordList.count == 256 && Set(RobotSecret.wordList.map { $0.prefix(4) }).count == 256)
        for typed in v.secret.typed + [v.secret.words] {
            #expect(try RobotSecret.parse(typed).get() == secret, "\(typed)")
        }
        for bad in v.badWords {
            guard case .failure(let error) = RobotSecret.parse(bad.typed) else { Issue.record("accepted \(bad.typed)"); continue }
            #expect(error.description == bad.error)
        }
        // Every byte round-trips; two random secrets differ (96 bits from the CSPRNG).
        for b in 0...255 {
            let s = RobotSecret(bytes: [UInt8](repeating: UInt8(b), count: 12))
            #expect(try RobotSecret.parse(s.words).get() == s)
        }
        #expect(RobotSecret.random() != RobotSecret.random())
    }

    @Test func proofKeysAndEnvelopesMatchTheVectors() throws {
        let v = try SecurityVectors.load()
        let secret = RobotSecret(bytes: try #require(Hex.bytes(v.secret.bytes)))
        let nr = try #require(Hex.bytes(v.handshake.receiverNonce)), nc = try #require(Hex.bytes(v.handshake.controllerNonce))
        let proof = SecretHandshake.proof(secret: secret, receiverNonce: nr, controllerNonce: nc)
        #expect(Hex.string(proof) == v.handshake.proof)
        #expect(SecretHandshake.verify(proof, secret: secret, receiverNonce: nr, controllerNonce: nc))
        #expect(!SecretHandshake.verify(proof, secret: RobotSecret(bytes: Array(1...12)), receiverNonce: nr, controllerNonce: nc))
        #expect(!SecretHandshake.verify(proof, secret: secret, receiverNonce: nc, controllerNonce: nr))
        let id = try #require(UInt64(v.handshake.connectionId, radix: 16))
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: nr, controllerNonce: nc, connectionID: id)
        for e in v.envelopes {
            let key = e.direction == "c2s" ? keys.controllerToReceiver : keys.receiverToController
            let wire = try #require(Hex.bytes(e.hex))
            let instance = try ControlDatagram.decode(Array(wire[..<ControlHeader.extendedSize])).header.connection
            let inner = try #require(Hex.bytes(e.inner))
            // Sealing the same bytes under the derived key gives the vector byte for byte (so the
            // keys are the vector's keys), and opening it gives them back.
            #expect(SealedEnvelope.seal(inner, connectionID: id, instance: instance, counter: e.counter, key: key) == wire, "\(e.name)")
            var window = ReplayWindow()
            #expect(try SealedEnvelope.open(wire, key: key, window: &window).get().inner == inner)
            #expect(SealedEnvelope.open(wire, key: key, window: &window) == .failure(.replayed), "a second time is a replay")
        }
        for r in v.refusedEnvelopes {
            var window = ReplayWindow()
            let result = SealedEnvelope.open(try #require(Hex.bytes(r.hex)), key: keys.controllerToReceiver, window: &window)
            #expect(result == .failure(SealedEnvelope.Failure(rawValue: r.why)!), "\(r.name)")
            #expect(window == ReplayWindow(), "a refused envelope moved the window: \(r.name)")
        }
    }

    @Test func protocolMdShowsEverySecurityVector() throws {
        let v = try SecurityVectors.load()
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        let values = [v.secret.bytes, v.secret.words, v.handshake.proof, v.handshake.proofKey]
            + v.envelopes.map(\.hex) + v.refusedEnvelopes.map(\.hex)
        for value in values { #expect(spec.contains(value), "Protocol.md lacks \(value)") }
    }

    @Test func theReplayWindowTakesEachCounterOnceAndNothingTooOld() {
        var w = ReplayWindow()
        #expect(!w.wouldAccept(0))
        for c: UInt64 in [5, 3, 4, 1, 100] { #expect(w.wouldAccept(c)); w.take(c) }
        for c: UInt64 in [5, 3, 4, 1, 100, 36] { #expect(!w.wouldAccept(c), "\(c)") }   // taken, or 64 behind 100
        #expect(w.wouldAccept(37) && w.wouldAccept(99) && w.wouldAccept(101))
    }

    @Test func theHandshakeAcceptsTheRightSecretWithAConnectionIdAndSealsEverything() throws {
        var rig = SecretRig()
        rig.handshake()
        #expect(rig.session.established)
        #expect(rig.delivered.contains { if case .accept = $0 { true } else { false } })
        let id = rig.plane.connectionID(of: "C")
        #expect(id != 0 && rig.session.connectionID == id && rig.channel.connectionID == id)
        #expect(rig.plane.mayDriveSealed("C") && !rig.plane.mayDrive("C"), "only sealed states drive")
        // A sealed state opens; the same state plain is not admitted.
        let forward = StatePacket.encode(ControllerState(angle: 0, buttons: .forward))
        let maybeSealed = rig.session.seal(forward)
        let sealed = try #require(maybeSealed)
        #expect(rig.plane.open(sealed, from: "C", now: rig.t0).0 == .state(forward))
        // Everything the receiver sends that controller from now on is sealed.
        try rig.channel.send(.data(channel: 9, bytes: [1]))
        var toReceiver: [[UInt8]] = []
        for d in rig.channel.poll(now: rig.t0).datagrams { toReceiver.append(rig.session.seal(d)!) }
        let out = rig.receiverTakes(toReceiver)
        #expect(!out.datagrams.isEmpty && out.datagrams.allSatisfy { ControlPlane<String>.isSealed($0.1) })
        // A plain bye from its address (the forger's) changes nothing.
        let plainBye = ControlDatagram(header: ControlHeader(type: .bye, connection: rig.channel.connection, sequence: 9, connectionID: id),
                                       payload: []).encode()
        #expect(rig.plane.control(plainBye, from: "C", now: rig.t0, unixMillis: 0).effects.allSatisfy {
            if case .left = $0 { false } else { true }
        })
        #expect(rig.plane.mayDriveSealed("C"))
    }

    @Test func aWrongSecretIsDeniedAndCountedAndNothingIsSealed() {
        var rig = SecretRig(controllerSecret: RobotSecret(bytes: Array(repeating: 7, count: 12)))
        try? rig.channel.send(.hello(.init(peerID: 1, displayName: "Eve")))
        var toReceiver = rig.channel.poll(now: rig.t0).datagrams
        var effects: [ControlPlane<String>.Effect] = []
        for _ in 0..<4 {
            let out = rig.receiverTakes(toReceiver)
            effects += out.effects
            toReceiver = rig.controllerTakes(out)
        }
        #expect(!rig.session.established && !rig.plane.mayDriveSealed("C"))
        #expect(effects.contains(.attemptFailed("C", what: "secret", failed: 1)))
        #expect(rig.delivered.contains { if case .deny(let d) = $0 { d.reason == .wrongPairingCode } else { false } })
        #expect(rig.plane.attempts.failed == 1)
    }

    /// Forged, replayed, reordered, truncated or extended envelopes never reach the board: the
    /// plane's `open` never returns a state for them (and a refused one never moves the window,
    /// so the genuine envelope still opens afterwards).
    @Test func mutatedEnvelopesNeverYieldAState() async {
        let kinds = Gen<Int>.int(in: 0...4)
        let positions = Gen<Int>.int(in: 0...10_000)
        let bits = Gen<Int>.int(in: 0...7)
        let extra = Gen<UInt8>.value().array(of: 1...16)
        await propertyCheck(count: 400, input: kinds, positions, bits, extra) { kind, position, bit, extra in
            var rig = SecretRig()
            rig.handshake()
            let states = (0..<6).map { StatePacket.encode(ControllerState(angle: Float($0) / 10, buttons: .forward)) }
            let sealed = states.map { rig.session.seal($0)! }
            let i = position % sealed.count
            var attack: [[UInt8]] = []
            var genuineAfter: [UInt8]?
            switch kind {
            case 0:   // one bit flipped anywhere
                var b = sealed[i]
                b[position % b.count] ^= UInt8(1 << bit)
                attack = [b]
                genuineAfter = sealed[i]
            case 1:   // truncated
                attack = [Array(sealed[i].prefix(position % sealed[i].count))]
                genuineAfter = sealed[i]
            case 2:   // extended
                attack = [sealed[i] + extra]
                genuineAfter = sealed[i]
            case 3:   // replayed: taken once, then again
                #expect(rig.plane.open(sealed[i], from: "C", now: rig.t0).0 == .state(states[i]))
                attack = [sealed[i]]
            default:  // reordered: a later state first, then an earlier one
                let later = min(sealed.count - 1, i + 1 + position % 3)
                guard later > i else { return }
                #expect(rig.plane.open(sealed[later], from: "C", now: rig.t0).0 == .state(states[later]))
                attack = [sealed[i]]
            }
            for a in attack {
                let (opened, out) = rig.plane.open(a, from: "C", now: rig.t0)
                #expect(opened == .refused, "kind \(kind): a mutated envelope opened: \(opened)")
                #expect(out.effects.count == 1)
            }
            if let genuineAfter {
                #expect(rig.plane.open(genuineAfter, from: "C", now: rig.t0).0 == .state(states[i]), "kind \(kind)")
            }
        }
    }

    /// Issue 19, item 3: all 10,000 pairing codes from 500 source ports within 0.7 s (the
    /// classmate's attack) meet the attempt limit: at most the shared burst is evaluated, the
    /// right code — sent last — is refused unevaluated, and every wrong one is counted.
    @Test func guessingPairingCodesMeetsTheAttemptLimit() {
        var s = ClassroomSettings()
        s.accept = .paired
        s.pairingCode = "4711"
        var p = ControlPlane<String>(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
        let t0 = ContinuousClock.now
        var codes = (0..<10_000).map { String(format: "%04d", $0) }.filter { $0 != "4711" }
        codes.shuffle()
        codes.append("4711")
        var accepted = 0, wrong = 0, throttled = 0
        var channels: [String: ReliableChannel] = [:]
        for (n, code) in codes.enumerated() {
            let source = "port-\(n % 500)"
            var c = channels[source] ?? ReliableChannel(connection: UInt32(1 + n % 500))
            try? c.send(.hello(.init(peerID: 1, displayName: "guess", pairingCode: WireText(code))))
            let now = t0 + .microseconds(70 * n)   // 10,000 in 0.7 s
            for d in c.poll(now: now).datagrams {
                for effect in p.control(d, from: source, now: now, unixMillis: 0).effects {
                    switch effect {
                    case .accepted: accepted += 1
                    case .attemptFailed: wrong += 1
                    case .attemptThrottled: throttled += 1
                    default: break
                    }
                }
            }
            channels[source] = c
        }
        let limit = AttemptLimiterOptions()
        #expect(accepted == 0, "the right code got through")
        #expect(wrong + accepted <= Int(limit.totalBurst + limit.totalRate * 0.7) + 1)
        #expect(wrong + throttled + accepted == 10_000)
        #expect(p.attempts.failed == wrong && p.attempts.throttled == throttled)
        // The limit is a rate, not a lockout: a minute later the right code works.
        var late = ReliableChannel(connection: 77)
        try? late.send(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "4711")))
        let later = t0 + .seconds(60)
        let effects = late.poll(now: later).datagrams.flatMap { p.control($0, from: "student", now: later, unixMillis: 0).effects }
        #expect(effects == [.accepted("student", name: "Ann")])
    }

    /// The same limit for secrets: 1,000 wrong proofs from 1,000 source ports; at most the shared
    /// burst is evaluated; each one evaluated is counted and reported (the receiver logs them,
    /// rate limited).
    @Test func guessingTheSecretMeetsTheAttemptLimit() {
        var evaluated = 0, throttled = 0
        var rig = SecretRig()
        for n in 0..<1_000 {
            let source = "port-\(n)"
            var c = ReliableChannel(connection: UInt32(1 + n))
            try? c.send(.hello(.init(peerID: 1, displayName: "guess")))
            var toReceiver = c.poll(now: rig.t0).datagrams
            var guesser = SecretSession(secret: RobotSecret.random(), instance: c.connection)
            for _ in 0..<3 {
                var out = ControlPlane<String>.Output()
                for d in toReceiver {
                    let o = rig.plane.control(d, from: source, now: rig.t0, unixMillis: 0)
                    out.datagrams += o.datagrams
                    out.effects += o.effects
                }
                out.datagrams += rig.plane.poll(now: rig.t0).datagrams
                for effect in out.effects {
                    if case .attemptFailed = effect { evaluated += 1 }
                    if case .attemptThrottled = effect { throttled += 1 }
                }
                for (to, bytes) in out.datagrams where to == source {
                    guard let d = try? ControlDatagram.decode(bytes) else { continue }
                    for case .delivered(.challenge(let nonce, _)) in c.receive(d, now: rig.t0) {
                        if let proof = guesser.answer(challenge: nonce) { try? c.send(proof) }
                    }
                }
                toReceiver = c.poll(now: rig.t0).datagrams
            }
        }
        #expect(evaluated == Int(AttemptLimiterOptions().totalBurst))
        #expect(evaluated + throttled == 1_000)
        #expect(rig.plane.attempts.failed == evaluated)
        #expect(!rig.plane.mayDriveSealed("port-0"))
    }

    /// Issue 19, item 4: a signed command names its receiver. A release captured on its way to
    /// robot-2 and replayed to robot-1 is refused there; replayed to robot-2 later, its nonce is
    /// refused; a repeat within the sender's burst is answered but changes nothing.
    @Test func aCommandForOneReceiverIsRefusedByAnotherAndItsNonceIsTakenOnce() throws {
        func robot(_ name: String) -> ControlPlane<String> {
            var s = ClassroomSettings()
            s.session = "class-3b"
            s.displayName = name
            s.teacherKey = TeacherKey(macKey: Array("teacher-secret".utf8))
            return ControlPlane(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
        }
        func datagram(_ action: ControlMessage.StopAll.Action, nonce: UInt64, target: String, millis: UInt64) -> [UInt8] {
            var c = ControlMessage.StopAll(action: action, unixMillis: millis, nonce: nonce, session: "class-3b", target: WireText(target))
            c.sign(key: Array("teacher-secret".utf8))
            return ControlDatagram(header: ControlHeader(type: .stopAll, connection: 5), payload: ControlMessage.stopAll(c).encodePayload()[...]).encode()
        }
        func outcome(_ p: inout ControlPlane<String>, _ d: [UInt8], now: UInt64) throws -> (ControlMessage.StopAllReply, [ControlPlane<String>.Effect]) {
            let out = p.control(d, from: "T", now: .now, unixMillis: now)
            let reply = try ControlDatagram.decode(try #require(out.datagrams.first?.1))
            guard case .stopAllReply(let r) = try ControlMessage.decode(type: reply.header.type, payload: reply.payload) else {
                throw ReplayTestError()
            }
            return (r, out.effects)
        }
        let t: UInt64 = 1_795_000_000_000
        var one = robot("robot-1"), two = robot("robot-2")
        // The teacher stops both (a command each), then releases robot-2 only.
        #expect(try outcome(&one, datagram(.stop, nonce: 1, target: "robot-1", millis: t), now: t).0.outcome == .stopped)
        #expect(try outcome(&two, datagram(.stop, nonce: 2, target: "robot-2", millis: t), now: t).0.outcome == .stopped)
        let release = datagram(.release, nonce: 3, target: "robot-2", millis: t + 1000)
        #expect(try outcome(&two, release, now: t + 1000).0.outcome == .released)
        #expect(try outcome(&two, release, now: t + 1010).0.outcome == .released, "a repeat of the burst is answered")
        // The captured release replayed to robot-1: refused, robot-1 stays stopped.
        let (replayed, effects) = try outcome(&one, release, now: t + 2000)
        #expect(replayed.outcome == .refused && replayed.text.text.contains("robot-2"))
        #expect(one.holding && effects.contains(.stopRefused("T", replayed.text.text)))
        // The teacher stops robot-2 again; the old release replayed to it is refused (its nonce).
        #expect(try outcome(&two, datagram(.stop, nonce: 4, target: "robot-2", millis: t + 3000), now: t + 3000).0.outcome == .stopped)
        #expect(try outcome(&two, release, now: t + 4000).0.outcome == .refused)
        #expect(two.holding)
        // A query changes nothing and names the receiver.
        let query = ControlDatagram(header: ControlHeader(type: .stopAll, connection: 5),
                                    payload: ControlMessage.stopAll(.init(action: .query, unixMillis: 0, nonce: 9, session: "class-3b")).encodePayload()[...]).encode()
        let (answer, none) = try outcome(&two, query, now: t + 5000)
        #expect(answer.displayName == "robot-2" && answer.outcome == .stopped && none.isEmpty && two.holding)
    }
}

struct ReplayTestError: Error {}
