@testable import AnalogRemoteKit
import ControlPlane
import ControlWire
import Foundation
import Synchronization
import SystemIO
import Testing

/// `.secret` sessions against a third party on loopback that does not know the secret: a relay
/// that sees every datagram between two peers, and a plain socket that speaks the protocol.
/// Each test would pass its opposite with `security: .none` (checked by turning the sealing off).
@Suite(.serialized) struct SecretSessionTests {
    static let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"

    static func secret() throws -> RemoteSession.Security { .secret(try RemoteSession.Secret(words: words)) }

    /// Everything Ada and Bob say passes through a relay that keeps a copy: the message's bytes
    /// appear nowhere in it, yet Bob gets the 64 KiB reliable message and the largest unreliable
    /// one intact.
    @Test func anObserverBetweenTwoPeersSeesNoPlaintext() async throws {
        let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: try Self.secret(), finder: nil)
        let bob = try RemoteSession(sessionID: "kit-secret", displayName: "Bob, who accepts", security: try Self.secret(), finder: nil)
        let relay = try Relay(to: bob.port)
        defer { relay.stop() }
        let inbox = bob.messages
        let peer = try await ada.connect(to: "127.0.0.1:\(relay.port)")
        #expect(peer.id == bob.localPeer.id)

        let marker = Array("the plaintext of Ada's message, which no observer may read".utf8)
        var big = (0..<RemoteSession.reliableLimit).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        big.replaceSubrange(40_000..<40_000 + marker.count, with: marker)
        let small = marker + [UInt8](repeating: 0x5A, count: RemoteSession.unreliableLimit - marker.count)
        try ada.send(Data(big), to: [peer], mode: .reliable)
        try ada.send(Data(small), to: [peer], mode: .unreliable)
        let got = await within {
            var got: [RemoteSession.SendMode: Data] = [:]
            for await message in inbox {
                got[message.mode] = message.data
                if got[.reliable] != nil { break }
            }
            return got
        }
        #expect(got[.reliable] == Data(big))
        // The unreliable one may be lost; when it arrived, it arrived whole.
        if let unreliable = got[.unreliable] { #expect(unreliable == Data(small)) }

        let captured = relay.captured
        let bytes = captured.reduce(into: [UInt8]()) { $0 += $1 }
        #expect(captured.count > 70, "the relay saw \(captured.count) datagrams")
        #expect(!bytes.contains(marker), "the message's plaintext crossed the network")
        #expect(!bytes.contains(Array("Bob, who accepts".utf8)), "the accepting peer's name crossed the network in the clear")
        // After the handshake, only envelopes (type 0x12).
        let large = captured.filter { $0.count > 200 }
        #expect(!large.isEmpty && large.allSatisfy { $0[3] == ControlType.sealed.rawValue })
        await ada.close()
        await bob.close()
    }

    /// A socket without the secret says hello, answers the challenge with a made-up proof, then
    /// sends `data` on channel 2 and a made-up envelope: none of it reaches Bob's messages
    /// (Ada's message after it, on the same socket queue, does), and its proof is denied.
    @Test func aSocketWithoutTheSecretCannotInjectAMessage() async throws {
        let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: try Self.secret(), finder: nil)
        let bob = try RemoteSession(sessionID: "kit-secret", displayName: "Bob", security: try Self.secret(), finder: nil)
        let inbox = bob.messages
        let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)")

        let mallory = try Intruder(to: bob.port)
        defer { mallory.close() }
        let injected = Array("injected by a socket without the secret".utf8)
        mallory.say(.hello(.init(peerID: 0x0123_4567_89ab_cdef, displayName: "Mallory", session: "kit-secret")))
        let answer = mallory.next { if case .challenge = $0 { true } else if case .accept = $0 { true } else { false } }
        if case .challenge? = answer {} else { Issue.record("Bob answered a hello without proof with \(String(describing: answer))") }
        mallory.say(.proof(nonce: [UInt8](repeating: 1, count: 16), mac: [UInt8](repeating: 2, count: 32)))
        mallory.say(.data(channel: 2, bytes: injected))
        mallory.send(SealedEnvelope.seal(ControlDatagram(header: ControlHeader(type: .datagram, connection: 7, connectionID: 9),
                                                         payload: ([2] + injected)[...]).encode(),
                                         connectionID: 9, instance: 7, counter: 1, key: AEADKey([UInt8](repeating: 3, count: 32))))
        let denied = mallory.next { if case .deny = $0 { true } else { false } }
        if case .deny(let deny)? = denied {
            #expect(deny.reason == .wrongPairingCode)
            #expect(deny.text.text.contains("secret"))
        } else {
            Issue.record("a made-up proof was not denied")
        }

        try ada.send(Data("after".utf8), to: [peer])
        let received = await within {
            var received: [RemoteSession.Message] = []
            for await message in inbox {
                received.append(message)
                if message.data == Data("after".utf8) { break }
            }
            return received
        }
        #expect(received.map(\.data) == [Data("after".utf8)])
        #expect(received.allSatisfy { $0.peer == ada.localPeer })
        #expect(await eventually { bob.bounds.proofsRefused == 1 && bob.bounds.envelopesRefused >= 1 }, "\(bob.bounds)")
        await ada.close()
        await bob.close()
    }

    /// A socket without the secret says hello under Ada's peer id and name while Ada is
    /// connected to Bob: it gets a challenge, its proof is denied, and Bob still knows one
    /// peer, with no change told for the impostor.
    @Test func aSocketWithoutTheSecretCannotClaimAPeersID() async throws {
        let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: try Self.secret(), finder: nil)
        let bob = try RemoteSession(sessionID: "kit-secret", displayName: "Bob", security: try Self.secret(), finder: nil)
        _ = try await ada.connect(to: "127.0.0.1:\(bob.port)")
        let changes = bob.peerChanges

        let mallory = try Intruder(to: bob.port)
        defer { mallory.close() }
        let adaID = try #require(UInt64(ada.localPeer.id, radix: 16))
        mallory.say(.hello(.init(peerID: adaID, displayName: "Ada", session: "kit-secret")))
        let answer = mallory.next { if case .challenge = $0 { true } else if case .accept = $0 { true } else { false } }
        if case .challenge? = answer {} else { Issue.record("Bob answered a hello without proof with \(String(describing: answer))") }
        mallory.say(.proof(nonce: [UInt8](repeating: 1, count: 16), mac: [UInt8](repeating: 2, count: 32)))
        let denied = mallory.next { if case .deny = $0 { true } else { false } }
        if case .deny? = denied {} else { Issue.record("a made-up proof was not denied") }

        #expect(bob.connectedPeers == [ada.localPeer])
        // The new sequence starts with Ada connected; Ada leaving is the next and only change.
        await ada.close()
        let seen = await within {
            var seen: [RemoteSession.PeerChange] = []
            for await change in changes {
                seen.append(change)
                if change.state == .disconnected { break }
            }
            return seen
        }
        #expect(seen.map(\.state) == [.connected, .disconnected])
        await bob.close()
    }

    /// Another secret, or no secret on one side: `connect` fails at once with `.refused` and a
    /// line that names the cause; nobody is connected.
    @Test func aWrongSecretFailsToConnectWithAClearError() async throws {
        let other = RemoteSession.Security.secret(.random())
        let bob = try RemoteSession(sessionID: "kit-secret", displayName: "Bob", security: try Self.secret(), finder: nil)
        let cases: [(RemoteSession.Security, String)] = [(other, "wrong secret"), (.none, "asks for a secret")]
        for (security, says) in cases {
            let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: security, finder: nil)
            do {
                let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)", timeout: .seconds(5))
                Issue.record("connected to \(peer) with \(security)")
            } catch let error as AnalogRemoteError {
                #expect(error.code == .refused)
                #expect(error.description.contains(says), "\(error)")
            }
            #expect(ada.connectedPeers.isEmpty)
            await ada.close()
        }
        let plain = try RemoteSession(sessionID: "kit-secret", displayName: "Carol", finder: nil)
        let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: try Self.secret(), finder: nil)
        do {
            let peer = try await ada.connect(to: "127.0.0.1:\(plain.port)", timeout: .seconds(5))
            Issue.record("a .secret session connected to a .none one: \(peer)")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .refused)
            #expect(error.description.contains("without a secret"), "\(error)")
        }
        #expect(bob.connectedPeers.isEmpty)
        #expect(await eventually { bob.bounds.proofsRefused == 1 }, "\(bob.bounds)")
        await ada.close()
        await plain.close()
        await bob.close()
    }

    /// Both peers connect at once: one handshake per link (the lower peer id answers), and each
    /// side's `connect` returns the other; a message then crosses sealed.
    @Test func bothPeersConnectingAtOnceMeetOnce() async throws {
        let ada = try RemoteSession(sessionID: "kit-secret", displayName: "Ada", security: try Self.secret(), finder: nil)
        let bob = try RemoteSession(sessionID: "kit-secret", displayName: "Bob", security: try Self.secret(), finder: nil)
        let inbox = ada.messages
        async let toBob = ada.connect(to: "127.0.0.1:\(bob.port)", timeout: .seconds(5))
        async let toAda = bob.connect(to: "127.0.0.1:\(ada.port)", timeout: .seconds(5))
        let (b, a) = try await (toBob, toAda)
        #expect(b == bob.localPeer)
        #expect(a == ada.localPeer)
        try bob.send(Data("both".utf8), to: [a])
        let got: Data? = await within { for await message in inbox { return message.data }; return nil }
        #expect(got == Data("both".utf8))
        #expect(ada.connectedPeers == [bob.localPeer] && bob.connectedPeers == [ada.localPeer])
        await ada.close()
        await bob.close()
    }

    /// The handshake is `--accept secret`'s: a `.secret` session connects to a receiver that
    /// shows the same words, a `.none` one is refused.
    @Test func aReceiverUnderAcceptSecretIsAPeer() async throws {
        let receiver = try SimulatedReceiver(["--name", "robot-7", "--accept", "secret", "--secret", Self.words])
        let sealed = try RemoteSession(sessionID: "AnalogRemote", displayName: "logger", security: try Self.secret(), finder: nil)
        let peer = try await sealed.connect(to: receiver.address)
        // Connected only on an accept sealed under the keys of this session's proof.
        #expect(peer.displayName == "robot-7")
        await sealed.close()

        let plain = try RemoteSession(sessionID: "AnalogRemote", displayName: "logger", finder: nil)
        await #expect(throws: AnalogRemoteError.self) { try await plain.connect(to: receiver.address, timeout: .seconds(5)) }
        await plain.close()
    }

    /// The words: typed loosely they parse; a wrong word or count is `.invalidArgument`; the
    /// description never shows them.
    @Test func secretWords() throws {
        let secret = try RemoteSession.Secret(words: "ACORN-actor, adul agen alarm album alley amber angle ankle apple apro")
        #expect(secret.words == Self.words)
        #expect(!"\(secret)".contains("acorn"))
        #expect(throws: AnalogRemoteError.self) { try RemoteSession.Secret(words: "acorn actor") }
        #expect(RemoteSession.Secret.random().words != RemoteSession.Secret.random().words)
    }
}

/// A UDP relay on 127.0.0.1 in front of `port`: what comes from the port goes to the last other
/// source, everything else goes to the port; every datagram is kept.
final class Relay: Sendable {
    let socket: UDPSocket
    let port: UInt16
    private let state = Mutex<(captured: [[UInt8]], stopped: Bool)>(([], false))

    init(to target: UInt16) throws {
        socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        port = try socket.localAddress().port
        let destination = try SocketAddress.resolve("127.0.0.1:\(target)")
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 2048)
            var client: SocketAddress?
            while !state.withLock({ $0.stopped }) {
                guard let got = try? socket.receive(into: &buffer, timeout: .milliseconds(50)), got.length <= buffer.count else { continue }
                let datagram = Array(buffer[..<got.length])
                state.withLock { $0.captured.append(datagram) }
                if got.from.port == target {
                    if let client { _ = try? socket.send(datagram, to: client) }
                } else {
                    client = got.from
                    _ = try? socket.send(datagram, to: destination)
                }
            }
            socket.close()
        }
        thread.start()
    }

    var captured: [[UInt8]] { state.withLock { $0.captured } }

    /// The relay's thread closes its socket within 50 ms.
    func stop() { state.withLock { $0.stopped = true } }
}

/// A plain socket that speaks the protocol without any secret: a reliable channel of its own.
final class Intruder {
    let socket: UDPSocket
    let target: SocketAddress
    var channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
    var buffer = [UInt8](repeating: 0, count: 2048)

    init(to port: UInt16) throws {
        socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        target = try SocketAddress.resolve("127.0.0.1:\(port)")
    }

    func send(_ datagram: [UInt8]) { _ = try? socket.send(datagram, to: target) }

    func say(_ message: ControlMessage) {
        try? channel.send(message)
        for d in channel.poll(now: .now).datagrams { send(d) }
    }

    /// The first message from the target that `wanted` takes, within 3 s (acks and
    /// retransmissions are answered on the way).
    func next(_ wanted: (ControlMessage) -> Bool) -> ControlMessage? {
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            guard let got = try? socket.receive(into: &buffer, timeout: .milliseconds(50)), got.length <= buffer.count,
                  let datagram = try? ControlDatagram.decode(Array(buffer[..<got.length])) else {
                for d in channel.poll(now: .now).datagrams { send(d) }
                continue
            }
            if !datagram.header.type.isReliable, let m = try? ControlMessage.decode(type: datagram.header.type, payload: datagram.payload),
               wanted(m) { return m }
            for event in channel.receive(datagram, now: .now) {
                if case .delivered(let m) = event, wanted(m) { return m }
            }
            for d in channel.poll(now: .now).datagrams { send(d) }
        }
        return nil
    }

    func close() { socket.close() }
}
