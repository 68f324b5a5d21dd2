import ControlPlane
import ControlWire
import Discovery
import Foundation
import Logging
import RemoteWire
import SystemIO

/// A ``RemoteSession``'s peers as its thread keeps them: one ``ReliableChannel`` per peer
/// address, the hello/accept/deny/bye exchange of Protocol.md §7.4 run symmetrically (either
/// side may connect; each accepts a hello of its own session), pings once a second, and a peer
/// silent for the disconnect timeout dropped. The peers DNS-SD announces are kept here too
/// (``PeerDirectory``), so every peer change is told from this one thread, in order.
///
/// Bounded, as a receiver's peer table is (a flood of hellos and out-of-order data from many
/// sources cannot grow the program): at most ``maxLinks`` links, ``maxLinksPerHost`` from one IP
/// address; each link's datagrams pass a token bucket (``rate``, ``burst``) before they are
/// decoded; and what all links hold for reordering and reassembly stays under ``bufferCap``
/// (beyond it the stalest links' buffers are dropped: their senders retransmit).
struct Links {
    static let maxLinks = 128
    static let maxLinksPerHost = 16
    static let rate = 2000.0
    static let burst = 200.0
    static let bufferCap = 4 << 20

    struct Link {
        var channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
        var bucket = TokenBucket(rate: Links.rate, burst: Links.burst)
        var peer: RemoteSession.Peer?
        var connected = false
        var waiters: [OneShot<Result<RemoteSession.Peer, AnalogRemoteError>>] = []
        var lastHeard: ContinuousClock.Instant
        var nextPing: ContinuousClock.Instant
        /// Said bye or was refused: dropped once what is queued is out.
        var leaving = false
        var pingID: UInt32 = 0
        /// `.secret` sessions only: the handshake and the envelopes.
        var sealing = LinkSealing.none
    }

    let engine: SessionEngine
    private var links: [SocketAddress: Link] = [:]
    private var buffer = [UInt8](repeating: 0, count: 2048)
    private var closing = false
    private var directory: PeerDirectory
    /// Hellos dropped because no link was free (logged once per episode).
    private var refusing = false
    private var bounds = SessionEngine.Bounds()
    /// `.secret`: what may arrive plain, before a link is sealed.
    static let plainHandshake: Set<ControlType> = [.hello, .challenge, .proof, .deny, .ack]
    /// `.secret`: proofs are attempts at the secret, limited as a receiver limits them.
    private var attempts = AttemptLimiter<SocketAddress>()
    private var secret: RobotSecret? { engine.options.secret }

    init(engine: SessionEngine) {
        self.engine = engine
        directory = PeerDirectory(session: engine.options.session, ownID: SessionEngine.idText(engine.options.peerID))
    }

    private var me: ControlMessage.Hello {
        .init(peerID: engine.options.peerID, displayName: WireText(engine.options.displayName), session: WireText(engine.options.sessionID))
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
            let wake = try? engine.runner.wait([(engine.socket.descriptor.rawValue, .readable)], untilInstant: deadline)
            let after = wake?.now.instant ?? ContinuousClock.now
            for command in wake?.events ?? [] where !closing {
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
            unreachable()
            service(now: after)
            // Changed first, told after: `tell(directory.expire(…))` would read `self` before the change.
            let expired = directory.expire(now: after)
            tell(expired)
            bounds.links = links.count
            if engine.bounds != bounds { engine.bounds = bounds }
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
                var link = Link(lastHeard: now, nextPing: now + .seconds(1))
                if let secret { link.sealing = .connector(SecretSession(secret: secret, instance: link.channel.connection)) }
                links[address] = link
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
                // What was sent before stays queued ahead of the goodbye: the link is dropped
                // once both are out (service(now:)), not now.
                say(.bye, to: address)
                leave(address, state: .disconnected, flushing: true)
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

    /// Sends a datagram of `address`'s link: in an envelope once a `.secret` link is sealed.
    private mutating func transmit(_ bytes: [UInt8], to address: SocketAddress) {
        var wire = bytes
        if secret != nil, var link = links[address] {
            guard let sealed = link.sealing.wire(bytes, instance: link.channel.connection) else { return }
            links[address]?.sealing = link.sealing
            wire = sealed
        }
        _ = try? engine.socket.send(wire, to: address)
    }

    private mutating func receiveAll(now: ContinuousClock.Instant) {
        var sinceCheck = 0
        while let got = try? engine.socket.receive(into: &buffer) {
            // Rate first, before anything is decoded (a source without a link has no bucket:
            // only a hello can open one, and the link caps bound those).
            if links[got.from] != nil, links[got.from]?.bucket.take(now: now) != true { continue }
            guard got.length <= buffer.count, ControlHeader.looksLikeControl(buffer[..<got.length]) else { continue }
            var bytes = Array(buffer[..<got.length])
            let sealed = bytes[3] == ControlType.sealed.rawValue
            if sealed || links[got.from]?.sealing.established == true {
                // An envelope opens only under its link's keys; once a link is sealed, nothing
                // plain is taken from its address (a forged bye, hello or data changes nothing).
                guard secret != nil, sealed, let inner = links[got.from]?.sealing.open(bytes) else {
                    if secret != nil { bounds.envelopesRefused += 1 }
                    continue
                }
                bytes = inner
            } else if secret != nil, let type = ControlType(rawValue: bytes[3]), !Self.plainHandshake.contains(type) {
                // Before the keys, only the handshake travels plain: nothing else may take a
                // sequence number on the link's channel (to be delivered later as if sealed).
                if type == .accept, links[got.from]?.waiters.isEmpty == false {
                    refuse(got.from, "\(got.from) accepted without a secret: it is a session with security .none (both sides must use the same security)")
                }
                bounds.envelopesRefused += 1
                continue
            }
            guard let datagram = try? ControlDatagram.decode(bytes) else { continue }
            take(datagram, from: got.from, sealed: sealed, now: now)
            sinceCheck += 1
            if sinceCheck == 64 {
                capBuffers()
                sinceCheck = 0
            }
        }
        capBuffers()
    }

    /// Keeps what all links hold for reordering and reassembly under ``bufferCap``: past it,
    /// the stalest links' buffers go (not yet connected ones first) until a fourth is free.
    private mutating func capBuffers() {
        var total = links.values.reduce(0) { $0 + $1.channel.bufferedBytes }
        defer { bounds.peakBuffered = max(bounds.peakBuffered, total) }
        guard total > Self.bufferCap else { return }
        let order = links.filter { $0.value.channel.bufferedBytes > 0 }
            .sorted { ($0.value.connected ? 1 : 0, $0.value.lastHeard) < ($1.value.connected ? 1 : 0, $1.value.lastHeard) }
        for (address, link) in order where total > Self.bufferCap * 3 / 4 {
            total -= link.channel.bufferedBytes
            links[address]?.channel.dropBuffered()
            bounds.buffersDropped += 1
        }
    }

    /// Whether a hello from `address` may open a link: under both caps, after evicting the
    /// stalest link that is of no use (leaving, or neither connected nor awaited) if need be.
    private mutating func roomForLink(from address: SocketAddress) -> Bool {
        func idle(_ link: Link) -> Bool { link.leaving || (!link.connected && link.waiters.isEmpty) }
        let sameHost = links.filter { $0.key.host == address.host }
        if sameHost.count >= Self.maxLinksPerHost {
            guard let stalest = sameHost.filter({ idle($0.value) }).min(by: { $0.value.lastHeard < $1.value.lastHeard }) else { return false }
            links[stalest.key] = nil
        }
        if links.count >= Self.maxLinks {
            guard let stalest = links.filter({ idle($0.value) }).min(by: { $0.value.lastHeard < $1.value.lastHeard }) else { return false }
            links[stalest.key] = nil
        }
        return true
    }

    /// The ICMP errors the kernel queued (``SessionEngine`` turns the queue on): a hello that met
    /// a closed port fails its `connect` at once instead of after the timeout. A connected peer is
    /// left to its pings and the disconnect timeout (one lost route is not a departure).
    private mutating func unreachable() {
        while let error = engine.socket.nextQueuedError() {
            let target = error.destination
            for (address, link) in links where address.port == target.port && address.host == target.host
                && !link.connected && !link.waiters.isEmpty {
                let why = error.errno == ECONNREFUSED ? "nothing listens on that port (the host answered port unreachable)"
                    : "unreachable (\(String(cString: strerror(error.errno))))"
                let failure = AnalogRemoteError(.peerUnreachable, "\(address): \(why); is a session running there?")
                for waiter in link.waiters { waiter.resolve(.failure(failure)) }
                engine.logger.debug("peer unreachable", metadata: ["address": "\(address)", "errno": "\(error.errno)"])
                links[address] = nil
            }
        }
    }

    /// `sealed`: it came in an envelope that opened under the link's keys.
    private mutating func take(_ datagram: ControlDatagram, from address: SocketAddress, sealed: Bool, now: ContinuousClock.Instant) {
        let type = datagram.header.type
        if links[address] == nil {
            // Only a hello opens a link; anything else from a stranger is dropped.
            guard type == .hello, !closing else { return }
            guard roomForLink(from: address) else {
                bounds.linksRefused += 1
                if !refusing {
                    refusing = true
                    engine.logger.warning("a hello was dropped: \(links.count) links are open (at most \(Self.maxLinks), \(Self.maxLinksPerHost) per host)",
                                          metadata: ["address": "\(address)"])
                }
                return
            }
            refusing = false
            links[address] = Link(lastHeard: now, nextPing: now + .seconds(1))
        }
        links[address]?.lastHeard = now
        if !type.isReliable, let message = try? ControlMessage.decode(type: type, payload: datagram.payload) {
            switch message {
            case .ping(let id, let sent):
                if let link = links[address] { transmit(link.channel.unreliable(.pong(id: id, sentNanos: sent)), to: address) }
            case .datagram(let channel, let bytes):
                if channel == SessionEngine.channel, let link = links[address], link.connected, let peer = link.peer {
                    engine.deliver(.init(peer: peer, data: Data(bytes), mode: .unreliable))
                }
            default: break
            }
        }
        guard let events = links[address]?.channel.receive(datagram, now: now) else { return }
        for event in events {
            guard case .delivered(let message) = event else { continue }
            deliver(message, header: datagram.header, from: address, sealed: sealed, now: now)
        }
    }

    private mutating func deliver(_ message: ControlMessage, header: ControlHeader, from address: SocketAddress,
                                  sealed: Bool, now: ContinuousClock.Instant) {
        switch message {
        case .hello(let hello):
            guard hello.session.text.utf8.elementsEqual(engine.options.sessionID.utf8) else {
                engine.logger.debug("refused a hello of another session", metadata: ["address": "\(address)", "session": "\(hello.session)"])
                say(.deny(.init(reason: .wrongSession, text: "this is session \(engine.options.sessionID.debugDescription), not \(hello.session.text.debugDescription)")), to: address)
                links[address]?.leaving = true
                return
            }
            let peer = RemoteSession.Peer(id: SessionEngine.idText(hello.peerID), displayName: hello.displayName.text)
            if secret != nil {
                challenge(hello, as: peer, from: address)
                return
            }
            say(.accept(.init(peerID: engine.options.peerID, displayName: WireText(engine.options.displayName),
                              failsafeMilliseconds: 0, rateHertz: 0)), to: address)
            if links[address]?.connected != true {
                engine.changes.yield(.init(peer: peer, state: .connecting))
                connect(address, as: peer)
            }
        case .accept(let accept):
            guard secret == nil || sealed else { return }   // refused before the channel (receiveAll)
            if header.connectionID != 0 { links[address]?.channel.connectionID = header.connectionID }
            connect(address, as: RemoteSession.Peer(id: SessionEngine.idText(accept.peerID), displayName: accept.displayName.text))
        case .deny(let deny):
            let error = AnalogRemoteError(.refused, "\(address) refused the connection: \(deny.text)")
            for waiter in links[address]?.waiters ?? [] { waiter.resolve(.failure(error)) }
            links[address]?.waiters = []
            leave(address, state: .disconnected)
        case .bye:
            leave(address, state: .disconnected)
        case .challenge(let nonce, _):
            guard secret != nil else {
                refuse(address, "\(address) asks for a secret: it is a .secret session (join with security: .secret(…) and its words)")
                return
            }
            guard case .connector(var session)? = links[address]?.sealing, let proof = session.answer(challenge: nonce) else { return }
            links[address]?.sealing = .connector(session)
            say(proof, to: address)
        case .proof(let nonce, let mac):
            check(proof: mac, nonce: nonce, from: address, now: now)
        case .data(let channel, let bytes):
            if channel == SessionEngine.channel, let link = links[address], link.connected, let peer = link.peer {
                engine.deliver(.init(peer: peer, data: Data(bytes), mode: .reliable))
            }
        default:
            break
        }
    }

    /// `.secret`, a hello of our session: challenge it (as a receiver under `--accept secret`
    /// does); the peer is told connected only once its proof is right. When both sides sent a
    /// hello at once, the one with the lower peer id answers and the other's hello is ignored, so
    /// that each link has one handshake.
    private mutating func challenge(_ hello: ControlMessage.Hello, as peer: RemoteSession.Peer, from address: SocketAddress) {
        guard let link = links[address], !link.sealing.established else { return }
        if case .connector = link.sealing, engine.options.peerID > hello.peerID { return }
        let nonce = SecretHandshake.nonce()
        links[address]?.sealing = .challenged(nonce: nonce, peer: peer)
        say(.challenge(nonce: nonce, echo: hello.nonce), to: address)
    }

    /// `.secret`: a proof for our challenge. Right: choose the connection, seal from here on
    /// (starting with the accept) and tell the peer connected. Wrong: deny reason 2, and the
    /// link goes once the deny is out.
    private mutating func check(proof mac: [UInt8], nonce: [UInt8], from address: SocketAddress, now: ContinuousClock.Instant) {
        guard let secret, case .challenged(let challenge, let peer)? = links[address]?.sealing else { return }
        links[address]?.sealing = .none
        guard attempts.allow(address, now: now) else {
            say(.deny(.init(reason: .rateLimited, text: "too many attempts at the secret: wait a minute, then try again")), to: address)
            links[address]?.leaving = true
            return
        }
        guard SecretHandshake.verify(mac, secret: secret, receiverNonce: challenge, controllerNonce: nonce) else {
            attempts.failedAttempt()
            bounds.proofsRefused += 1
            engine.logger.warning("a peer did not prove the session's secret: refused", metadata: ["address": "\(address)", "claims": "\(peer)"])
            say(.deny(.init(reason: .wrongPairingCode, text: "wrong secret: this session's peers use other words")), to: address)
            links[address]?.leaving = true
            return
        }
        var rng = SystemRandomNumberGenerator()
        let id = UInt64.random(in: 1...UInt64.max, using: &rng)
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: challenge, controllerNonce: nonce, connectionID: id)
        links[address]?.sealing = .acceptor(.init(connectionID: id, keys: keys))
        links[address]?.channel.connectionID = id
        say(.accept(.init(peerID: engine.options.peerID, displayName: WireText(engine.options.displayName),
                          failsafeMilliseconds: 0, rateHertz: 0)), to: address)
        if links[address]?.connected != true {
            engine.changes.yield(.init(peer: peer, state: .connecting))
            connect(address, as: peer)
        }
    }

    /// Fails the link's `connect` calls with `.refused` and drops it.
    private mutating func refuse(_ address: SocketAddress, _ why: String) {
        let error = AnalogRemoteError(.refused, why)
        for waiter in links[address]?.waiters ?? [] { waiter.resolve(.failure(error)) }
        links[address]?.waiters = []
        engine.logger.debug("refused", metadata: ["address": "\(address)", "why": "\(why)"])
        leave(address, state: .disconnected)
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

    /// Forgets a peer (after what is queued for it is out, when closing or `flushing`) and says so.
    private mutating func leave(_ address: SocketAddress, state: RemoteSession.PeerState, flushing: Bool = false) {
        guard let link = links[address] else { return }
        if closing || flushing {
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
            var ping: [UInt8]?
            if link.connected, !closing, now >= link.nextPing {
                link.pingID &+= 1
                let nanos = UInt64(clamping: (now - link.lastHeard).components.seconds)
                ping = link.channel.unreliable(.ping(id: link.pingID, sentNanos: nanos))
                link.nextPing = now + .seconds(1)
            }
            let (datagrams, events) = link.channel.poll(now: now)
            // Stored before anything is sent: sending moves the link's envelope counter.
            links[address] = link
            for d in (ping.map { [$0] } ?? []) + datagrams { transmit(d, to: address) }
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
