import ControlPlane
import Foundation
import SystemIO

/// A ``RemoteSession``'s peers as its thread keeps them: one ``ReliableChannel`` per peer
/// address, the hello/accept/deny/bye exchange of Protocol.md §7.4 run symmetrically (either
/// side may connect; each accepts a hello of its own session), pings once a second, and a peer
/// silent for the disconnect timeout dropped.
struct Links {
    struct Link {
        var channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
        var peer: RemoteSession.Peer?
        var connected = false
        var waiters: [OneShot<Result<RemoteSession.Peer, AnalogRemoteError>>] = []
        var lastHeard: ContinuousClock.Instant
        var nextPing: ContinuousClock.Instant
        /// Said bye or was refused: dropped once what is queued is out.
        var leaving = false
        var pingID: UInt32 = 0
    }

    let engine: SessionEngine
    private var links: [SocketAddress: Link] = [:]
    private var buffer = [UInt8](repeating: 0, count: 2048)
    private var closing = false

    init(engine: SessionEngine) {
        self.engine = engine
    }

    private var me: ControlMessage.Hello {
        .init(peerID: engine.options.peerID, displayName: engine.options.displayName, session: engine.options.sessionID)
    }

    /// Runs until a `.close` (then says bye to everyone, waiting at most a second for the acks).
    mutating func run() {
        var closeDeadline: ContinuousClock.Instant?
        while true {
            let now = ContinuousClock.now
            if let closeDeadline, now >= closeDeadline || links.values.allSatisfy({ $0.channel.backlog == 0 }) { break }
            var deadline = links.values.flatMap { [$0.channel.nextDeadline(now: now), $0.connected ? $0.nextPing : nil] }
                .compactMap { $0 }.min()
            if let closeDeadline { deadline = min(deadline ?? closeDeadline, closeDeadline) }
            let fds: [(fd: Int32, events: Poller.Events)] = [(engine.socket.descriptor.rawValue, .readable),
                                                              (engine.mailbox.descriptor, .readable)]
            _ = try? Poller.wait(fds, until: deadline)
            let after = ContinuousClock.now
            for command in engine.mailbox.drain() where !closing {
                if case .close = command {
                    closing = true
                    closeDeadline = after + .seconds(1)
                    for address in links.keys { say(.bye, to: address) }
                    failWaiters(AnalogRemoteError(.closed, "the session was closed"))
                } else {
                    handle(command, now: after)
                }
            }
            receiveAll(now: after)
            service(now: after)
        }
        failWaiters(AnalogRemoteError(.closed, "the session was closed"))
    }

    private mutating func handle(_ command: SessionEngine.Command, now: ContinuousClock.Instant) {
        switch command {
        case .connect(let address, let answer):
            if let link = links[address], link.connected, let peer = link.peer {
                answer.resolve(.success(peer))
                return
            }
            if links[address] == nil {
                links[address] = Link(lastHeard: now, nextPing: now + .seconds(1))
                say(.hello(me), to: address)
            }
            links[address]?.waiters.append(answer)
        case .send(let bytes, let to, let mode):
            for (address, link) in links where link.connected && !link.leaving {
                guard let peer = link.peer, to?.contains(peer.id) ?? true else { continue }
                switch mode {
                case .reliable: say(.data(channel: SessionEngine.channel, bytes: bytes), to: address)
                case .unreliable: transmit(link.channel.unreliable(.datagram(channel: SessionEngine.channel, bytes: bytes)), to: address)
                }
            }
        case .disconnect(let id):
            for (address, link) in links where link.peer?.id == id {
                say(.bye, to: address)
                leave(address, state: .disconnected)
            }
        case .close:
            break
        }
    }

    /// Queues a reliable message (sent by ``service(now:)``).
    private mutating func say(_ message: ControlMessage, to address: SocketAddress) {
        try? links[address]?.channel.send(message)
    }

    private func transmit(_ bytes: [UInt8], to address: SocketAddress) {
        _ = try? engine.socket.send(bytes, to: address)
    }

    private mutating func receiveAll(now: ContinuousClock.Instant) {
        while let got = try? engine.socket.receive(into: &buffer) {
            guard got.length <= buffer.count, ControlHeader.looksLikeControl(buffer[..<got.length]),
                  let datagram = try? ControlDatagram.decode(Array(buffer[..<got.length])) else { continue }
            take(datagram, from: got.from, now: now)
        }
    }

    private mutating func take(_ datagram: ControlDatagram, from address: SocketAddress, now: ContinuousClock.Instant) {
        let type = datagram.header.type
        if links[address] == nil {
            // Only a hello opens a link; anything else from a stranger is dropped.
            guard type == .hello, !closing else { return }
            links[address] = Link(lastHeard: now, nextPing: now + .seconds(1))
        }
        links[address]?.lastHeard = now
        if !type.isReliable, let message = try? ControlMessage.decode(type: type, payload: datagram.payload) {
            switch message {
            case .ping(let id, let sent):
                if let link = links[address] { transmit(link.channel.unreliable(.pong(id: id, sentNanos: sent)), to: address) }
            case .datagram(let channel, let bytes):
                if channel == SessionEngine.channel, let link = links[address], link.connected, let peer = link.peer {
                    engine.messages.yield(.init(peer: peer, data: Data(bytes), mode: .unreliable))
                }
            default: break
            }
        }
        guard let events = links[address]?.channel.receive(datagram, now: now) else { return }
        for event in events {
            guard case .delivered(let message) = event else { continue }
            deliver(message, header: datagram.header, from: address, now: now)
        }
    }

    private mutating func deliver(_ message: ControlMessage, header: ControlHeader, from address: SocketAddress,
                                  now: ContinuousClock.Instant) {
        switch message {
        case .hello(let hello):
            guard hello.session.utf8.elementsEqual(engine.options.sessionID.utf8) else {
                say(.deny(.init(reason: .wrongSession, text: "this is session \(engine.options.sessionID.debugDescription), not \(hello.session.debugDescription)")), to: address)
                links[address]?.leaving = true
                return
            }
            let peer = RemoteSession.Peer(id: SessionEngine.idText(hello.peerID), displayName: hello.displayName)
            say(.accept(.init(peerID: engine.options.peerID, displayName: engine.options.displayName,
                              failsafeMilliseconds: 0, rateHertz: 0)), to: address)
            if links[address]?.connected != true {
                engine.changes.yield(.init(peer: peer, state: .connecting))
                connect(address, as: peer)
            }
        case .accept(let accept):
            if header.connectionID != 0 { links[address]?.channel.connectionID = header.connectionID }
            connect(address, as: RemoteSession.Peer(id: SessionEngine.idText(accept.peerID), displayName: accept.displayName))
        case .deny(let deny):
            let error = AnalogRemoteError(.refused, "\(address) refused the connection: \(deny.text)")
            for waiter in links[address]?.waiters ?? [] { waiter.resolve(.failure(error)) }
            links[address]?.waiters = []
            leave(address, state: .disconnected)
        case .bye:
            leave(address, state: .disconnected)
        case .data(let channel, let bytes):
            if channel == SessionEngine.channel, let link = links[address], link.connected, let peer = link.peer {
                engine.messages.yield(.init(peer: peer, data: Data(bytes), mode: .reliable))
            }
        default:
            break
        }
    }

    private mutating func connect(_ address: SocketAddress, as peer: RemoteSession.Peer) {
        guard var link = links[address], !link.leaving else { return }
        let fresh = !link.connected
        let waiters = link.waiters
        link.peer = peer
        link.connected = true
        link.waiters = []
        links[address] = link
        // Published before anyone is told: a caller of connect(to:) sends to the peer at once.
        if fresh {
            publish()
            engine.changes.yield(.init(peer: peer, state: .connected))
        }
        for waiter in waiters { waiter.resolve(.success(peer)) }
    }

    /// Forgets a peer (after what is queued for it is out, when closing) and says so.
    private mutating func leave(_ address: SocketAddress, state: RemoteSession.PeerState) {
        guard let link = links[address] else { return }
        if closing {
            links[address]?.leaving = true
        } else {
            links[address] = nil
        }
        for waiter in link.waiters { waiter.resolve(.failure(AnalogRemoteError(.notConnected, "\(address) left"))) }
        if link.connected, let peer = link.peer {
            links[address]?.connected = false
            publish()
            engine.changes.yield(.init(peer: peer, state: state))
        }
    }

    /// Sends what is due (retransmissions, acks, pings) and drops peers gone silent.
    private mutating func service(now: ContinuousClock.Instant) {
        for address in Array(links.keys) {
            guard var link = links[address] else { continue }
            if link.connected, !closing, now >= link.nextPing {
                link.pingID &+= 1
                let nanos = UInt64(clamping: (now - link.lastHeard).components.seconds)
                transmit(link.channel.unreliable(.ping(id: link.pingID, sentNanos: nanos)), to: address)
                link.nextPing = now + .seconds(1)
            }
            let (datagrams, events) = link.channel.poll(now: now)
            links[address] = link
            for d in datagrams { transmit(d, to: address) }
            let silent = now - link.lastHeard > engine.options.disconnectTimeout
            if events.contains(.peerUnreachable) || (link.connected && silent) {
                for waiter in link.waiters {
                    waiter.resolve(.failure(AnalogRemoteError(.timedOut, "\(address) does not answer")))
                }
                links[address]?.waiters = []
                leave(address, state: .disconnected)
                if closing { links[address] = nil }
            } else if link.leaving, !closing, link.channel.backlog == 0 {
                links[address] = nil
            }
        }
    }

    private mutating func failWaiters(_ error: AnalogRemoteError) {
        for address in links.keys {
            for waiter in links[address]?.waiters ?? [] { waiter.resolve(.failure(error)) }
            links[address]?.waiters = []
        }
    }

    private func publish() {
        engine.publish(links.values.filter(\.connected).compactMap(\.peer).sorted { $0.id < $1.id })
    }
}
