import ControlPlane
import ControlWire
import Discovery
import Foundation
import Logging
import SystemIO

/// A ``RemoteSession``'s peers as its thread keeps them: one ``ReliableChannel`` per peer
/// address, the hello/accept/deny/bye exchange of Protocol.md §7.4 run symmetrically (either
/// side may connect; each accepts a hello of its own session), pings once a second, and a peer
/// silent for the disconnect timeout dropped. The peers DNS-SD announces are kept here too
/// (``PeerDirectory``), so every peer change is told from this one thread, in order.
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
    private var directory: PeerDirectory

    init(engine: SessionEngine) {
        self.engine = engine
        directory = PeerDirectory(session: engine.options.session, ownID: SessionEngine.idText(engine.options.peerID))
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
            if let expiry = directory.nextDeadline { deadline = min(deadline ?? expiry, expiry) }
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
            // Changed first, told after: `tell(directory.expire(…))` would read `self` before the change.
            let expired = directory.expire(now: after)
            tell(expired)
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
        case .discovered(let event):
            discovered(event, now: now)
        case .close:
            break
        }
    }

    private mutating func discovered(_ event: FinderEvent, now: ContinuousClock.Instant) {
        switch event {
        case .browsed(let role, let event):
            switch event {
            case .responderLost(let retry):
                if engine.setDiscovery(.unavailable(AnalogRemoteError(.discoveryUnavailable,
                    "the mDNS responder went away: peers are not found by name until it is back (retrying in \(retry))"))) {
                    engine.logger.warning("the mDNS responder went away; retrying", metadata: ["retry": "\(retry)"])
                }
            case .responderBack:
                if engine.setDiscovery(.active) { engine.logger.info("the mDNS responder is back") }
            default:
                break
            }
            let changes = directory.apply(role, event, now: now)
            tell(changes)
        case .advertised(.registered(let name)):
            engine.logger.debug("announced", metadata: ["name": "\(name)", "port": "\(engine.port)"])
        case .advertised(.responderLost):
            break   // the browsers say it too
        case .advertised(.failed(let error)):
            engine.logger.warning("this session is not announced: \(error); others can still connect to it by address")
        }
    }

    /// Publishes and tells the DNS-SD changes.
    private func tell(_ changes: [RemoteSession.PeerChange]) {
        guard !changes.isEmpty else { return }
        publish()
        for change in changes {
            engine.logger.debug("peer \(change.state)", metadata: ["peer": "\(change.peer)"])
            engine.changes.yield(change)
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
                engine.logger.debug("refused a hello of another session", metadata: ["address": "\(address)", "session": "\(hello.session)"])
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
            engine.logger.debug("peer connected", metadata: ["peer": "\(peer)", "address": "\(address)"])
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
            engine.logger.debug("peer \(state)", metadata: ["peer": "\(peer)", "address": "\(address)"])
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
        engine.publish(connected: links.values.filter(\.connected).compactMap(\.peer).sorted { $0.id < $1.id },
                       available: directory.peers.compactMap { directory.sightings[$0.id] })
    }
}
