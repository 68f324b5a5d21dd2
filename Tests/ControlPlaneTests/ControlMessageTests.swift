import ControlPlane
import ControlWire
import Crypto
import Foundation
import PropertyBased
import RemoteWire
import TestSupport
import Testing

/// vectors/control-messages.json: every message type as hex, shared with Protocol.md §7.
struct ControlVectors: Decodable {
    struct Vector: Decodable { let name, hex: String }
    struct Score: Decodable { let name, hex: String; let points, rank, players, round, rounds, phase: Int }
    struct Scores: Decodable { let valid: [Score]; let rejected: [Vector] }
    let messages: [Vector]
    let rejected: [Vector]
    let gameScores: Scores

    enum CodingKeys: String, CodingKey { case messages, rejected, gameScores = "game_scores" }

    static func load() throws -> ControlVectors {
        try JSONDecoder().decode(ControlVectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/control-messages.json")))
    }
}

@Suite struct ControlMessageTests {
    static let examples: [(String, ControlDatagram)] = {
        func d(_ type: ControlType, seq: UInt32, ack: UInt32 = 0, id: UInt64 = 0, _ m: ControlMessage) -> ControlDatagram {
            ControlDatagram(header: ControlHeader(type: type, connection: 0x1234_5678, sequence: seq, ack: ack, connectionID: id),
                            payload: m.encodePayload()[...])
        }
        var stop = ControlMessage.StopAll(action: .stop, unixMillis: 1_795_000_000_000, nonce: 0x0102_0304_0506_0708, session: "class-3b")
        stop.sign(key: Array("teacher-secret".utf8))
        var release = ControlMessage.StopAll(action: .release, unixMillis: 1_795_000_000_000, nonce: 0x0102_0304_0506_0709,
                                             session: "class-3b", target: "robot-2")
        release.sign(key: Array("teacher-secret".utf8))
        let query = ControlMessage.StopAll(action: .query, unixMillis: 1_795_000_000_000, nonce: 0x0102_0304_0506_0710, session: "class-3b")
        let secret = RobotSecret(bytes: Array(0..<12))
        let nr = Array(UInt8(0x10)..<0x20), nc = Array(UInt8(0x20)..<0x30)
        let helloNonce: UInt64 = 0x0102_0304_0506_0708
        var signedReply = ControlMessage.StopAllReply(nonce: 0x0102_0304_0506_0708, outcome: .stopped, displayName: "robot-1")
        signedReply.sign(key: Array("teacher-secret".utf8))
        var aimed = ControlMessage.StopAll(action: .stop, unixMillis: 1_795_000_000_000, nonce: 0x0102_0304_0506_0711,
                                           session: "class-3b", target: "id:k3m9x2ab")
        aimed.sign(key: Array("teacher-secret".utf8))
        var aimedReply = ControlMessage.StopAllReply(nonce: 0x0102_0304_0506_0711, outcome: .stopped, displayName: "robot-1",
                                                     text: "id:k3m9x2ab")
        aimedReply.sign(key: Array("teacher-secret".utf8))
        return [
            ("hello from Ann with pairing code 4711", d(.hello, seq: 1, .hello(.init(peerID: 0xAABB_CCDD_0011_2233, displayName: "Ann", pairingCode: "4711", session: "class-3b")))),
            ("accept: receiver robot-1, failsafe 250 ms, 50 Hz", d(.accept, seq: 1, ack: 1, .accept(.init(peerID: 0x0102_0304_0506_0708, displayName: "robot-1", failsafeMilliseconds: 250, rateHertz: 50)))),
            ("deny: wrong pairing code", d(.deny, seq: 1, ack: 1, .deny(.init(reason: .wrongPairingCode, text: "wrong pairing code")))),
            ("bye", d(.bye, seq: 2, ack: 1, .bye)),
            ("ping id 1", d(.ping, seq: 0, .ping(id: 1, sentNanos: 1_000_000))),
            ("pong id 1", d(.pong, seq: 0, .pong(id: 1, sentNanos: 1_000_000))),
            ("data on channel 1: 'A'", d(.data, seq: 3, ack: 1, .data(channel: 1, bytes: [0x41]))),
            ("ack up to 3, 5 also received", d(.ack, seq: 0, ack: 3, .ack(selective: 1))),
            ("stop-all for every receiver of class-3b signed with key 'teacher-secret'", d(.stopAll, seq: 0, .stopAll(stop))),
            ("stop-all reply: robot-1 stopped", d(.stopAllReply, seq: 0, .stopAllReply(.init(nonce: 0x0102_0304_0506_0708, outcome: .stopped, displayName: "robot-1")))),
            ("stop-all reply: robot-2 refused, wrong teacher key",
             d(.stopAllReply, seq: 0, .stopAllReply(.init(nonce: 0x0102_0304_0506_0708, outcome: .refused, displayName: "robot-2", text: "wrong teacher key")))),
            ("data on channel 1: game score 12 points, rank 3 of 32, round 1 of 1, playing",
             d(.data, seq: 4, ack: 1, GameScore(points: 12, rank: 3, players: 32, round: 1, rounds: 1, phase: .playing).message)),
            ("accept with connection id 1122334455667788 (version 2)",
             d(.accept, seq: 1, ack: 1, id: 0x1122_3344_5566_7788,
               .accept(.init(peerID: 0x0102_0304_0506_0708, displayName: "robot-1", failsafeMilliseconds: 250, rateHertz: 50)))),
            ("bye with connection id 1122334455667788 (version 2)", d(.bye, seq: 2, ack: 1, id: 0x1122_3344_5566_7788, .bye)),
            ("release for robot-2 of class-3b signed with key 'teacher-secret'", d(.stopAll, seq: 0, .stopAll(release))),
            ("stop-all query (unsigned)", d(.stopAll, seq: 0, .stopAll(query))),
            ("challenge: receiver nonce 10…1f", d(.challenge, seq: 2, ack: 1, .challenge(nonce: nr, echo: 0))),
            ("proof: controller nonce 20…2f, secret 00…0b",
             d(.proof, seq: 2, ack: 2, .proof(nonce: nc, mac: SecretHandshake.proof(secret: secret, receiverNonce: nr, controllerNonce: nc)))),
            ("hello from Ann in class-3b with hello nonce 0102030405060708",
             d(.hello, seq: 1, .hello(.init(peerID: 0xAABB_CCDD_0011_2233, displayName: "Ann", session: "class-3b", nonce: helloNonce)))),
            ("accept echoing hello nonce 0102030405060708, connection id 1122334455667788",
             d(.accept, seq: 1, ack: 1, id: 0x1122_3344_5566_7788,
               .accept(.init(peerID: 0x0102_0304_0506_0708, displayName: "robot-1", failsafeMilliseconds: 250, rateHertz: 50, echo: helloNonce)))),
            ("deny: wrong session, echoing hello nonce 0102030405060708",
             d(.deny, seq: 1, ack: 1, .deny(.init(reason: .wrongSession, text: "wrong session", echo: helloNonce)))),
            ("challenge: receiver nonce 10…1f, echoing hello nonce 0102030405060708",
             d(.challenge, seq: 1, ack: 1, .challenge(nonce: nr, echo: helloNonce))),
            ("stop-all reply: robot-1 stopped, signed with key 'teacher-secret'", d(.stopAllReply, seq: 0, .stopAllReply(signedReply))),
            ("stop-all for robot id k3m9x2ab of class-3b signed with key 'teacher-secret'", d(.stopAll, seq: 0, .stopAll(aimed))),
            ("stop-all reply: robot-1 (robot id k3m9x2ab) stopped, signed with key 'teacher-secret'",
             d(.stopAllReply, seq: 0, .stopAllReply(aimedReply))),
        ]
    }()

    @Test func vectorFileMatchesTheEncoder() throws {
        let file = try ControlVectors.load()
        #expect(file.messages.map(\.name) == Self.examples.map(\.0))
        for (vector, (_, datagram)) in zip(file.messages, Self.examples) {
            #expect(vector.hex == Hex.string(datagram.encode()), "\(vector.name)")
            let decoded = try ControlDatagram.decode(try #require(Hex.bytes(vector.hex)))
            #expect(decoded == datagram)
            #expect(try ControlMessage.decode(type: decoded.header.type, payload: decoded.payload).encodePayload() == Array(datagram.payload))
        }
        for vector in file.rejected {
            #expect(throws: ControlMessageError.self, "\(vector.name)") {
                let d = try ControlDatagram.decode(Hex.bytes(vector.hex) ?? [])
                _ = try ControlMessage.decode(type: d.header.type, payload: d.payload)
            }
        }
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for vector in file.messages + file.rejected where !vector.hex.isEmpty {
            // Long vectors are shown abbreviated (first 20 bytes and an ellipsis).
            let shown = vector.hex.count < 400 ? vector.hex : String(vector.hex.prefix(40)) + "…"
            #expect(spec.contains(shown), "Protocol.md lacks the control vector \(vector.name)")
        }
    }

    /// The game's channel-1 payload (Protocol.md §7.8): every field at its documented offset.
    @Test func gameScoreVectors() throws {
        let file = try ControlVectors.load().gameScores
        #expect(!file.valid.isEmpty && !file.rejected.isEmpty)
        for v in file.valid {
            let bytes = try #require(Hex.bytes(v.hex))
            let score = try GameScore.decode(bytes)
            #expect(Int(score.points) == v.points && Int(score.rank) == v.rank && Int(score.players) == v.players, "\(v.name)")
            #expect(Int(score.round) == v.round && Int(score.rounds) == v.rounds && Int(score.phase.rawValue) == v.phase, "\(v.name)")
            #expect(score.encode() == bytes, "\(v.name)")
        }
        for v in file.rejected {
            #expect(throws: ControlMessageError.self, "\(v.name)") { try GameScore.decode(Hex.bytes(v.hex) ?? []) }
        }
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for v in file.valid { #expect(spec.contains(v.hex), "Protocol.md lacks the game score vector \(v.name)") }
    }

    @Test func stopAllMACChecksKeyAndContent() {
        var s = ControlMessage.StopAll(action: .stop, unixMillis: 1, nonce: 2, session: "s")
        s.sign(key: Array("k".utf8))
        #expect(s.verify(key: Array("k".utf8)))
        #expect(!s.verify(key: Array("K".utf8)))
        var tampered = s
        tampered.action = .release
        #expect(!tampered.verify(key: Array("k".utf8)))
    }

    @Test func stateSizedOrShortDatagramsAreNeverControl() {
        #expect(!ControlHeader.looksLikeControl([0x41, 0x52, 1, 1, 0, 0, 0, 1]))
        #expect(throws: ControlMessageError(.tooShort, at: 0, bytes: [0x41, 0x52])) { try ControlDatagram.decode([0x41, 0x52]) }
    }

    /// Any bytes: decoding a datagram and then its payload never traps.
    @Test func randomBytesNeverTrap() async {
        await propertyCheck(count: 3000, input: Gen<UInt8>.value().array(of: 0...80)) { tail in
            for type in ControlType.allCases {
                var bytes: [UInt8] = [0x41, 0x52, 1, type.rawValue]
                bytes += tail
                if let d = try? ControlDatagram.decode(bytes) {
                    _ = try? ControlMessage.decode(type: d.header.type, payload: d.payload)
                }
                _ = try? ControlMessage.decode(type: type, payload: tail[...])
            }
        }
    }
}

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func fipsVectors(input: String, digest: String) {
        #expect(Hex.string(SHA256.hash(data: Array(input.utf8))) == digest)
    }

    @Test func rfc4231HMACCase2() {
        let mac = HMACSHA256.authenticate(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(Hex.string(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func rfc4231HMACCase6LongKey() {
        let mac = HMACSHA256.authenticate(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                          key: [UInt8](repeating: 0xAA, count: 131))
        #expect(Hex.string(mac) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
