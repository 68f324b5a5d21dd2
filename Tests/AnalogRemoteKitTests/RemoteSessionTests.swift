import AnalogRemoteKit
import Foundation
import Testing

@Suite(.serialized) struct RemoteSessionTests {
    /// Two sessions on loopback: connect, see each other connected, exchange a 64 KiB reliable
    /// message (chunked, reassembled intact) and an unreliable one; a goodbye disconnects.
    @Test func twoPeersConnectAndExchange() async throws {
        let ada = try await RemoteSession(sessionID: "kit-test", displayName: "Ada")
        let bob = try await RemoteSession(sessionID: "kit-test", displayName: "Bob")
        let bobChanges = bob.peerChanges
        let bobMessages = bob.messages
        let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)")
        #expect(peer.displayName == "Bob")
        #expect(peer.id == bob.localPeer.id)

        let adaPeer = ada.localPeer
        let states = await within {
            var states: [RemoteSession.PeerChange] = []
            for await change in bobChanges {
                states.append(change)
                if change.state == .connected { break }
            }
            return states
        }
        #expect(states.map(\.state) == [.connecting, .connected])
        #expect(states.allSatisfy { $0.peer == adaPeer })

        let big = Data((0..<RemoteSession.reliableLimit).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try ada.send(big, to: [peer], mode: .reliable)
        try ada.send(Data("ping".utf8), mode: .unreliable)
        let received = await within {
            var received: [RemoteSession.Message] = []
            for await message in bobMessages {
                received.append(message)
                if received.contains(where: { $0.mode == .reliable }) && received.contains(where: { $0.mode == .unreliable }) { break }
            }
            return received
        }
        #expect(received.first { $0.mode == .reliable }?.data == big)
        #expect(received.first { $0.mode == .unreliable }?.data == Data("ping".utf8))
        #expect(received.allSatisfy { $0.peer == ada.localPeer })

        // A new subscription starts with the peers connected now, then what changes.
        let later = bob.peerChanges
        await ada.close()
        let afterClose = await within {
            var seen: [RemoteSession.PeerChange] = []
            for await change in later {
                seen.append(change)
                if change.state == .disconnected { break }
            }
            return seen
        }
        #expect(afterClose.map(\.state) == [.connected, .disconnected])
        #expect(bob.connectedPeers.isEmpty)
        await bob.close()
    }

    /// A reliable message sent before the other side makes its `messages` sequence is held for
    /// it, not lost: Bob iterates only after Ada has left, and still gets everything she sent.
    @Test func messagesSentBeforeAnyoneIteratesArrive() async throws {
        let ada = try await RemoteSession(sessionID: "kit-early", displayName: "Ada", discovery: false)
        let bob = try await RemoteSession(sessionID: "kit-early", displayName: "Bob", discovery: false)
        let bobChanges = bob.peerChanges
        let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)")
        try ada.send(Data("early".utf8), to: [peer])
        try ada.send(Data("second".utf8), to: [peer])
        // The goodbye travels on the same reliable channel after both messages, in order: once
        // Bob's session reports Ada disconnected, both have reached it.
        ada.disconnect(from: peer)
        let left = await within {
            for await change in bobChanges where change.state == .disconnected { return true }
            return false
        }
        #expect(left, "Bob never saw Ada leave")
        let inbox = bob.messages
        let received = await within {
            var received: [Data] = []
            for await message in inbox {
                received.append(message.data)
                if received.count == 2 { break }
            }
            return received
        }
        #expect(received == [Data("early".utf8), Data("second".utf8)])
        #expect(bob.droppedMessages == 0)
        await ada.close()
        await bob.close()
    }

    /// The inbox is bounded: past ``RemoteSession/inboxLimit`` waiting messages, the next are
    /// dropped and counted, and the first ones are still delivered in order.
    @Test func aFullInboxDropsAndCounts() async throws {
        let ada = try await RemoteSession(sessionID: "kit-full", displayName: "Ada", discovery: false)
        let bob = try await RemoteSession(sessionID: "kit-full", displayName: "Bob", discovery: false)
        let bobChanges = bob.peerChanges
        let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)")
        let extra = 10
        for i in 0..<(RemoteSession.inboxLimit + extra) { try ada.send(Data("\(i)".utf8), to: [peer]) }
        ada.disconnect(from: peer)
        let left = await within(.seconds(30)) {
            for await change in bobChanges where change.state == .disconnected { return true }
            return false
        }
        #expect(left, "Bob never saw Ada leave")
        #expect(bob.droppedMessages == extra)
        let inbox = bob.messages
        let received = await within {
            var received: [String] = []
            for await message in inbox {
                received.append(String(decoding: message.data, as: UTF8.self))
                if received.count == RemoteSession.inboxLimit { break }
            }
            return received
        }
        #expect(received == (0..<RemoteSession.inboxLimit).map { "\($0)" })
        await ada.close()
        await bob.close()
    }

    @Test func anotherSessionIsRefused() async throws {
        let ada = try await RemoteSession(sessionID: "one", displayName: "Ada")
        let eve = try await RemoteSession(sessionID: "two", displayName: "Eve")
        do {
            _ = try await ada.connect(to: "127.0.0.1:\(eve.port)")
            Issue.record("a peer of another session connected")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .refused, "\(error)")
        }
        await ada.close()
        await eve.close()
    }

    @Test func tooBigOrNotConnectedThrows() async throws {
        let ada = try await RemoteSession(sessionID: "limits", displayName: "Ada")
        #expect(throws: AnalogRemoteError.self) {
            try ada.send(Data(count: RemoteSession.unreliableLimit + 1), mode: .unreliable)
        }
        #expect(throws: AnalogRemoteError.self) {
            try ada.send(Data(count: RemoteSession.reliableLimit + 1))
        }
        let stranger = try await RemoteSession(sessionID: "limits", displayName: "Stranger")
        do {
            try ada.send(Data("x".utf8), to: [stranger.localPeer])
            Issue.record("sent to a peer that is not connected")
        } catch {
            #expect(error.code == .notConnected)
        }
        await ada.close()
        await stranger.close()
    }

    /// A receiver of the same session is a peer: it accepts the connection under its name.
    @Test func aReceiverIsAPeer() async throws {
        let receiver = try SimulatedReceiver(["--name", "robot-7"])
        let session = try await RemoteSession(sessionID: "AnalogRemote", displayName: "logger")
        let peer = try await session.connect(to: receiver.address)
        #expect(peer.displayName == "robot-7")
        await session.close()
    }
}
