import ControlPlane
import ControlWire
import RemoteWire
import Crypto
import Foundation
import RemoteWire
import TestSupport
import Testing

/// The control plane against forged datagrams (Protocol.md §7.4.1, §7.4.2, §8.4), as values:
/// what a plain sender can and cannot change about an authenticated or named connection.
@Suite struct ForgedControlTests {
    static func datagram(_ m: ControlMessage, instance: UInt32, sequence: UInt32 = 1, connectionID: UInt64 = 0) -> [UInt8] {
        ControlDatagram(header: ControlHeader(type: m.type, connection: instance, sequence: m.type.isReliable ? sequence : 0,
                                              connectionID: connectionID),
                        payload: m.encodePayload()[...]).encode()
    }

    @Test func underSecretPlainDatagramsWithTheConnectionsIdsChangeNothingFromAnyAddress() {
        var rig = SecretRig()
        rig.handshake()
        #expect(rig.session.established)
        let id = rig.plane.connectionID(of: "C")
        #expect(id != 0)
        for from in ["C", "M"] {
            for m: ControlMessage in [.bye, .ping(id: 1, sentNanos: 1), .data(channel: 1, bytes: [1])] {
                for seq in UInt32(1)...8 {
                    let out = rig.plane.control(Self.datagram(m, instance: rig.channel.connection, sequence: seq, connectionID: id),
                                                from: from, now: rig.t0, unixMillis: 0)
                    #expect(out.datagrams.isEmpty, "\(m) from \(from) was answered")
                    #expect(!out.effects.contains { if case .moved = $0 { true } else if case .left = $0 { true } else { false } },
                            "\(m) from \(from): \(out.effects)")
                }
            }
        }
        #expect(rig.plane.connectionID(of: "C") == id)
        #expect(rig.plane.mayDriveSealed("C"))
        #expect(rig.plane.connectionID(of: "M") == 0)
    }

    @Test func underSecretAMoveNeedsAnEnvelopeThatOpensAndTakesTheKeysAlong() throws {
        var rig = SecretRig()
        rig.handshake()
        let id = rig.plane.connectionID(of: "C")
        // A forged envelope from M naming the connection: refused, nothing moves.
        var forged = rig.session
        let sealedGood = forged.seal(StatePacket.encode(.neutral))
        let good = try #require(sealedGood)
        var bad = good
        bad[bad.count - 1] ^= 1
        let (refused, out1) = rig.plane.open(bad, from: "M", now: rig.t0)
        #expect(refused == .refused)
        #expect(!out1.effects.contains { if case .moved = $0 { true } else { false } })
        // The real controller's envelope from M: the connection moves, keys and all.
        let (opened, out2) = rig.plane.open(good, from: "M", now: rig.t0)
        #expect(opened == .state(StatePacket.encode(.neutral)))
        #expect(out2.effects.contains(.moved(from: "C", to: "M", name: "Ann")))
        #expect(rig.plane.connectionID(of: "M") == id && rig.plane.mayDriveSealed("M"))
        let sealedNext = forged.seal(StatePacket.encode(ControllerState(angle: 0, buttons: .forward)))
        let next = try #require(sealedNext)
        let (later, _) = rig.plane.open(next, from: "M", now: rig.t0)
        #expect(later == .state(StatePacket.encode(ControllerState(angle: 0, buttons: .forward))))
    }

    @Test func underSecretAHelloFromTheOwnersAddressIsAContenderThatNeverTouchesTheKeys() throws {
        var rig = SecretRig()
        rig.handshake()
        let id = rig.plane.connectionID(of: "C")
        let hello = Self.datagram(.hello(.init(peerID: 9, displayName: "Mallory", nonce: 77)), instance: 0x0BAD)
        let out = rig.plane.control(hello, from: "C", now: rig.t0, unixMillis: 0)
        let all = out.datagrams + rig.plane.poll(now: rig.t0).datagrams
        // Plain (type 0x10, not 0x12): never sealed under the owner's keys.
        let challenge = try #require(all.first { $0.0 == "C" && $0.1[3] == ControlType.challenge.rawValue }?.1, "\(all)")
        let d = try ControlDatagram.decode(challenge)
        #expect(d.header.connectionID == 0)
        guard case .challenge(_, let echo) = try ControlMessage.decode(type: .challenge, payload: d.payload) else { Issue.record(); return }
        #expect(echo == 77)
        // The real controller ignores it and keeps its keys; the owner's connection stands.
        let answer = rig.session.answer(challenge: Array(repeating: 1, count: 16))
        #expect(answer == nil)
        #expect(rig.plane.connectionID(of: "C") == id && rig.plane.mayDriveSealed("C"))
        var s = rig.session
        let sealedState = s.seal(StatePacket.encode(.neutral))
        let state = try #require(sealedState)
        let (opened, _) = rig.plane.open(state, from: "C", now: rig.t0)
        #expect(opened == .state(StatePacket.encode(.neutral)))
    }

    @Test(arguments: [AcceptMode.first, .paired])
    func aHelloFromTheOwnersAddressIsAContenderUntilItUsesItsNewConnection(mode: AcceptMode) throws {
        var s = ClassroomSettings()
        s.accept = mode
        s.pairingCode = "4711"
        s.session = "class-3b"
        var plane = ControlPlane<String>(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
        let t0 = ContinuousClock.now
        _ = plane.control(Self.datagram(.hello(.init(peerID: 1, displayName: "Ann", pairingCode: "4711", nonce: 5)), instance: 0xC1),
                          from: "C", now: t0, unixMillis: 0)
        let id = plane.connectionID(of: "C")
        #expect(id != 0 && plane.displayName(of: "C") == "Ann")
        // Wrong session (and under paired a wrong code): denied on the contender's channel,
        // plain, echoing its nonce; never a deny on the owner's channel.
        var hellos = [ControlMessage.Hello(peerID: 9, displayName: "M", pairingCode: "4711", session: "other", nonce: 6)]
        if mode == .paired { hellos.append(.init(peerID: 9, displayName: "M", pairingCode: "0000", nonce: 7)) }
        for (i, h) in hellos.enumerated() {
            let out = plane.control(Self.datagram(.hello(h), instance: 0xBAD0 + UInt32(i)), from: "C", now: t0, unixMillis: 0)
            #expect(out.effects.contains { if case .contenderDenied = $0 { true } else { false } }, "\(out.effects)")
            #expect(!out.effects.contains { if case .denied = $0 { true } else { false } })
        }
        let sent = plane.poll(now: t0).datagrams.filter { $0.1[3] == ControlType.deny.rawValue }
        #expect(sent.count == hellos.count && sent.allSatisfy { ControlHeader.connectionID(in: $0.1) == nil })
        #expect(plane.connectionID(of: "C") == id && plane.displayName(of: "C") == "Ann")
        // Accepted contender: gets its own id; the owner's connection and name stand until the
        // contender speaks with that id.
        _ = plane.control(Self.datagram(.hello(.init(peerID: 2, displayName: "Ann-2", pairingCode: "4711", nonce: 8)), instance: 0xC2),
                          from: "C", now: t0, unixMillis: 0)
        #expect(plane.connectionID(of: "C") == id && plane.displayName(of: "C") == "Ann")
        let polled = plane.poll(now: t0).datagrams
        let accept = try #require(polled.first { $0.1[3] == ControlType.accept.rawValue }?.1)
        let newID = try #require(ControlHeader.connectionID(in: accept))
        #expect(newID != id)
        let out = plane.control(Self.datagram(.ping(id: 1, sentNanos: 1), instance: 0xC2, connectionID: newID), from: "C", now: t0, unixMillis: 0)
        #expect(out.effects.contains(.accepted("C", name: "Ann-2")))
        #expect(plane.connectionID(of: "C") == newID && plane.displayName(of: "C") == "Ann-2")
    }

    @Test func namesFromTheWireAreEscapedWhereTheyEnter() throws {
        let hello = Self.datagram(.hello(.init(peerID: 1, displayName: "Ann\u{1B}[2J\nforged line\u{202E}")), instance: 1)
        let d = try ControlDatagram.decode(hello)
        guard case .hello(let h) = try ControlMessage.decode(type: .hello, payload: d.payload) else { Issue.record(); return }
        #expect(h.displayName == "Ann\\u{1B}[2J\\u{A}forged line\\u{202E}")
        #expect(DisplayText.sanitised("Zoë 🤖") == "Zoë 🤖")
    }

    @Test func aPeerThatNeverAcknowledgesCannotGrowItsSendQueue() {
        var table = PeerTable<String>(connection: 1)
        let t0 = ContinuousClock.now
        for _ in 0..<1000 { table.send(.deny(.init(reason: .other, text: "x")), to: "M", now: t0) }
        #expect(table.backlog(to: "M") == table.options.maxBacklog)
        #expect(table.sendsDropped == 1000 - table.options.maxBacklog)
        table.protected = "O"
        for _ in 0..<100 { table.send(.deny(.init(reason: .other, text: "x")), to: "O", now: t0) }
        #expect(table.backlog(to: "O") == 100, "the owner is exempt")
    }
}

/// Teacher keys (Protocol.md §7.6, §8.6; vectors/security.json `teacher_keys`, scrypt by Python).
@Suite struct TeacherKeyTests {
    struct Vectors: Decodable {
        struct Key: Decodable { let text: String; let mac_key: String }
        struct Keys: Decodable { let passphrases, generated: [Key]; let refused: [String] }
        let teacher_keys: Keys
    }

    @Test func vectorsDeriveTheDocumentedMACKeys() throws {
        let v = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/security.json"))).teacher_keys
        for k in v.passphrases + v.generated {
            #expect(try TeacherKey(text: k.text).macKey == Hex.bytes(k.mac_key), "\(k.text)")
        }
        for text in v.refused {
            #expect(throws: TeacherKeyError.self, "\(text)") { try TeacherKey(text: text) }
        }
    }

    @Test func keygenKeysAreFreshAndParse() throws {
        let a = TeacherKey.generate(), b = TeacherKey.generate()
        #expect(a != b && a.hasPrefix("ark1-") && a.count == 69)
        #expect(try TeacherKey(text: a).macKey.count == 32)
    }
}
