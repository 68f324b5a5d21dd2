import ControlPlane
import ControlWire
import Discovery
import Foundation
import Logging
import SystemIO

/// A peer-to-peer session, as GameKit's `GKSession` was one: join a session ID under a display
/// name, connect to peers, and send them data — reliably (up to 64 KiB, in order, exactly once)
/// or unreliably (one datagram of up to 943 bytes, best effort, maybe reordered).
///
/// ```swift
/// let session = try await RemoteSession(sessionID: "class-7b", displayName: "Ada")
/// let bob = try await session.connect(to: "192.168.1.20:40001")
/// try session.send(Data("hello".utf8), to: [bob])
/// for await message in session.messages { print(message.peer.displayName, message.data) }
/// ```
///
/// Peers find each other by DNS-SD or by address. Each session listens on a UDP port (``port``)
/// and announces itself on the LAN under its session ID (Avahi on Linux); the peers it finds are
/// reported ``PeerState/available`` — other programs' sessions and `analog-remote receive`
/// receivers of the same session ID — and ``PeerState/unavailable`` when they leave. Connect to
/// one with ``connect(to:timeout:)-(RemoteSession.Peer,_)``, or to any address with
/// ``connect(to:timeout:)-(String,_)``; either side may connect, and a peer of another session ID
/// is refused. Without an mDNS responder the session still works by address, and
/// ``discoveryState`` says why nothing is found. A receiver accepts the connection and shows up
/// under its name. Every peer's changes of state arrive in ``peerChanges``, every message in
/// ``messages``; nothing calls back into your code.
///
/// Plain by default, for games on a LAN you trust; `security: .secret(…)` admits only peers that
/// prove a shared secret and encrypts everything after the handshake (``Security``).
///
/// The wire format is Protocol.md §7 (hello, accept, deny, bye, ping, `data` and `datagram` on
/// channel 2, §7.13; under `.secret`, the handshake and envelopes of §8.3).
public final class RemoteSession: Sendable {
    /// Someone in the session, known by a random id chosen when its session was created (not by
    /// its display name: two peers may share one).
    public struct Peer: Hashable, Sendable, Identifiable, CustomStringConvertible {
        /// 16 hex digits, unique per session object.
        public let id: String
        public let displayName: String

        public var description: String { "\(displayName) (\(id))" }
    }

    /// Where a peer stands with this session (GameKit's `GKPeerConnectionState`).
    public enum PeerState: Hashable, Sendable {
        /// Seen, not connected.
        case available
        /// A connection is being set up (the hello is out, no answer yet).
        case connecting
        case connected
        /// The peer left (said goodbye), stopped answering, or refused the connection.
        case disconnected
        /// The peer is gone from the network.
        case unavailable
    }

    public struct PeerChange: Hashable, Sendable {
        public let peer: Peer
        public let state: PeerState
    }

    /// How ``send(_:to:mode:)`` delivers (GameKit's `GKSendDataMode`).
    public enum SendMode: Hashable, Sendable {
        /// Retransmitted until acknowledged, delivered once and in order; up to 64 KiB.
        case reliable
        /// One datagram, sent once: may be lost or reordered, never delays; up to 943 bytes.
        case unreliable
    }

    /// Whether peers are found by DNS-SD.
    public enum DiscoveryState: Hashable, Sendable {
        /// Not asked for (`discovery: false`): peers meet by address only.
        case off
        /// This session is announced, and the session's peers are reported as they come and go.
        case active
        /// No mDNS responder (or it went away): nothing is found by name, connecting by address
        /// still works. The error (code ``AnalogRemoteError/Code/discoveryUnavailable``) says
        /// why and what to do. A responder that comes back makes it ``active`` again; one that
        /// was missing when the session started is not looked for again (join anew).
        case unavailable(AnalogRemoteError)
    }

    public struct Message: Sendable {
        public let peer: Peer
        public let data: Data
        public let mode: SendMode
    }

    /// The largest message of each mode.
    public static let reliableLimit = ReliableChannel.maxMessage
    public static let unreliableLimit = ControlMessage.datagramLimit

    /// This session's own peer (its id is what the others see).
    public let localPeer: Peer
    public let sessionID: String
    /// Whether this session's traffic is sealed and its peers prove a secret.
    public let security: Security
    /// The UDP port this session listens on.
    public let port: UInt16
    private let engine: SessionEngine

    /// Joins `sessionID`, starts listening, and (with `discovery`) announces this session and
    /// looks for its peers by DNS-SD.
    ///
    /// - Parameters:
    ///   - sessionID: only peers with the same ID connect (1…247 bytes of UTF-8).
    ///   - displayName: how the others see this peer (1…255 bytes of UTF-8).
    ///   - security: `.none` (plain: read and joined by anyone on the LAN) or `.secret(…)`
    ///     (encrypted, and only peers that prove the same secret connect); see ``Security``.
    ///   - port: the UDP port; 0 picks a free one.
    ///   - disconnectTimeout: a connected peer silent this long is disconnected (it is pinged
    ///     every second).
    ///   - discovery: announce this session and report the peers found as `.available`. Without
    ///     an mDNS responder this does not fail: ``discoveryState`` says so, and `logger` warns once.
    ///   - logger: where the session says what it does (peers found, connected and gone, refused
    ///     hellos, discovery trouble); nil logs nothing.
    public convenience init(sessionID: String, displayName: String, security: Security = .none, port: UInt16 = 0,
                            disconnectTimeout: Duration = .seconds(5), discovery: Bool = true,
                            logger: Logger? = nil) async throws(AnalogRemoteError) {
        try self.init(sessionID: sessionID, displayName: displayName, security: security, port: port,
                      disconnectTimeout: disconnectTimeout, finder: discovery ? DNSSDPeerFinder() : nil, logger: logger)
    }

    /// `finder`: how peers are found (tests give their own); nil: by address only.
    init(sessionID: String, displayName: String, security: Security = .none, port: UInt16 = 0,
         disconnectTimeout: Duration = .seconds(5), finder: (any PeerFinder)?, logger: Logger? = nil) throws(AnalogRemoteError) {
        let session = try Arguments.session(sessionID, parameter: "sessionID")
        guard !displayName.isEmpty, displayName.utf8.count <= 255 else {
            throw AnalogRemoteError(.invalidArgument, "display name: give 1…255 bytes of UTF-8")
        }
        let id = UInt64.random(in: 1...UInt64.max)
        let engine = try SessionEngine(.init(session: session, displayName: displayName, peerID: id, port: port,
                                             disconnectTimeout: disconnectTimeout, secret: security.robotSecret),
                                       finder: finder, logger: logger ?? Logger.silent("AnalogRemoteKit.RemoteSession"))
        self.engine = engine
        self.sessionID = sessionID
        self.security = security
        self.port = engine.port
        localPeer = Peer(id: SessionEngine.idText(id), displayName: displayName)
        engine.startDiscovery()
        engine.start()
    }

    /// Leaves the session when the last reference goes (goodbye to every peer).
    deinit {
        engine.post(.close)
    }

    /// Every peer's state changes, in order; a new sequence starts with the available peers
    /// (`.available`), then the connected ones (`.connected`).
    /// Ends when the session is closed. Ending the iteration does not close the session.
    public var peerChanges: AsyncStream<PeerChange> { engine.changes.subscribe() }

    /// Every message from a peer, from the moment the session exists. Ends when the session is
    /// closed.
    ///
    /// Nothing is lost for being early: messages that arrive while no sequence of this property
    /// exists are held, up to ``inboxLimit``, and the first sequence made afterwards starts with
    /// them. Each sequence gets every message that arrives while it exists, so make one and keep
    /// iterating it. At most ``inboxLimit`` messages wait — held, or queued behind a sequence that
    /// is not read fast enough; a message that finds no room is dropped, counted in
    /// ``droppedMessages`` and logged as a warning (never silently).
    public var messages: AsyncStream<Message> { engine.messages.subscribe() }

    /// How many messages may wait to be read: held before the first ``messages`` sequence is
    /// made, or queued behind one that is not read fast enough.
    public static let inboxLimit = 1024

    /// Messages dropped because ``inboxLimit`` were already waiting (see ``messages``).
    public var droppedMessages: Int { engine.droppedMessages }

    /// What the link caps have done so far (tests).
    var bounds: SessionEngine.Bounds { engine.bounds }

    /// The peers connected now.
    public var connectedPeers: [Peer] { engine.connected }

    /// The peers DNS-SD announces now (connected or not), by display name.
    public var availablePeers: [Peer] { engine.available.map(\.peer) }

    /// Whether peers are found by DNS-SD, and if not, why.
    public var discoveryState: DiscoveryState { engine.discovery }

    /// Connects to the session at `address` (`HOST:PORT`, `[IPv6]:PORT`); returns the peer once
    /// it accepted. A peer already connected is returned at once.
    ///
    /// - Throws: ``AnalogRemoteError`` — `.invalidArgument` (not `HOST:PORT`: no port, say),
    ///   `.networkUnavailable` (the name does not resolve), `.refused` (another session ID, a
    ///   wrong secret, or the other side chose other ``Security``),
    ///   `.peerUnreachable` (nothing listens on that port: the host said so), `.timedOut`,
    ///   `.closed`; `CancellationError` when the task is cancelled while waiting.
    public func connect(to address: String, timeout: Duration = .seconds(10)) async throws -> Peer {
        let target = try Arguments.address(address)
        return try await connect(engine.reachable(target), naming: address, timeout: timeout)
    }

    /// Connects to a peer DNS-SD found (an ``availablePeers`` element, or one that arrived as
    /// `.available` in ``peerChanges``), at the address it announced; returns it once it
    /// accepted. A peer already connected is returned at once.
    ///
    /// - Throws: ``AnalogRemoteError`` — `.notConnected` (the peer is not available: not found
    ///   yet, or gone), `.refused`, `.peerUnreachable`, `.timedOut`, `.closed`;
    ///   `CancellationError` when the task is cancelled while waiting.
    public func connect(to peer: Peer, timeout: Duration = .seconds(10)) async throws -> Peer {
        if let connected = engine.connected.first(where: { $0.id == peer.id }) { return connected }
        guard let address = engine.available.first(where: { $0.peer.id == peer.id })?.addresses.first else {
            throw AnalogRemoteError(.notConnected, "\(peer) is not available (wait for .available in peerChanges, or connect by address)")
        }
        return try await connect(engine.reachable(address), naming: "\(peer) at \(address)", timeout: timeout)
    }

    private func connect(_ target: SocketAddress, naming label: String, timeout: Duration) async throws -> Peer {
        try Task.checkCancellation()
        let answer = OneShot<Result<Peer, AnalogRemoteError>>()
        engine.post(.connect(target, answer))
        let result = await answer.value(within: timeout) {
            .failure(AnalogRemoteError(.timedOut, "no answer from \(label) within \(timeout) (is a session listening there?)"))
        } cancelled: {
            .failure(AnalogRemoteError(.closed, "cancelled while connecting to \(label)"))
        }
        if case .failure = result { try Task.checkCancellation() }
        return try result.get()
    }

    /// Sends `data` to `peers` (nil: every connected peer). Returns at once; a reliable message is
    /// queued and retransmitted until acknowledged.
    ///
    /// - Throws: ``AnalogRemoteError`` — `.dataTooBig` (over ``reliableLimit`` or
    ///   ``unreliableLimit``), `.notConnected` (a named peer is not connected), `.closed`.
    public func send(_ data: Data, to peers: [Peer]? = nil, mode: SendMode = .reliable) throws(AnalogRemoteError) {
        let limit = mode == .reliable ? Self.reliableLimit : Self.unreliableLimit
        guard data.count <= limit else {
            throw AnalogRemoteError(.dataTooBig, "\(data.count) bytes: \(mode == .reliable ? "a reliable" : "an unreliable") message holds at most \(limit) (split it, or send it reliably)")
        }
        let connected = Set(engine.connected)
        if let peers, let missing = peers.first(where: { !connected.contains($0) }) {
            throw AnalogRemoteError(.notConnected, "\(missing) is not connected (wait for .connected in peerChanges)")
        }
        guard !engine.isClosed else { throw AnalogRemoteError(.closed, "the session is closed") }
        engine.post(.send([UInt8](data), to: peers.map { Set($0.map(\.id)) }, mode: mode))
    }

    /// Says goodbye to one peer and forgets it.
    public func disconnect(from peer: Peer) {
        engine.post(.disconnect(peer.id))
    }

    /// Says goodbye to every peer, closes the port, ends the sequences; returns once done.
    /// Idempotent.
    public func close() async {
        engine.post(.close)
        await engine.finished.value
    }
}
