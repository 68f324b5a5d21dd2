import ControlPlane
import Discovery
import Foundation
import Logging
import Synchronization
import SystemIO

/// The I/O of a ``RemoteSession``: one UDP socket and one thread polling it together with a
/// command mailbox and the next timer (retransmission, ping, silence, discovery expiry).
/// Everything mutable lives on that thread (``Links``); other threads post commands (discovery
/// events too) and read the published peer lists.
final class SessionEngine: Sendable {
    struct Options: Sendable {
        var session: SessionID
        var sessionID: String { session.text }
        var displayName: String
        var peerID: UInt64
        var port: UInt16
        var disconnectTimeout: Duration
        /// Under ``RemoteSession/Security/secret(_:)``: every link proves it and is sealed.
        var secret: RobotSecret?
    }

    enum Command: Sendable {
        case connect(SocketAddress, OneShot<Result<RemoteSession.Peer, AnalogRemoteError>>)
        case send([UInt8], to: Set<String>?, mode: RemoteSession.SendMode)
        case disconnect(String)
        case discovered(FinderEvent)
        case close
    }

    struct Published {
        var peers: [RemoteSession.Peer] = []
        var available: [PeerDirectory.Sighting] = []
        var discovery = RemoteSession.DiscoveryState.off
        var closed = false
        var dropped = 0
        /// A drop was logged and nothing was delivered since: the next drops are only counted.
        var overflowing = false
        var bounds = Bounds()
    }

    /// What the link caps did (tests read it; a flood must show here, not in memory).
    struct Bounds: Hashable, Sendable {
        var links = 0
        var linksRefused = 0
        var buffersDropped = 0
        /// `.secret`: envelopes that did not open, and plain datagrams on a sealed link.
        var envelopesRefused = 0
        /// `.secret`: proofs checked and found wrong.
        var proofsRefused = 0
        /// The most all links held for reordering and reassembly after a cap check.
        var peakBuffered = 0
    }

    /// Application data of a ``RemoteSession`` travels on this `data`/`datagram` channel
    /// (channel 1 is the button game's, Protocol.md §7.8).
    static let channel: UInt8 = 2

    let options: Options
    let socket: UDPSocket
    let port: UInt16
    /// Whether the socket is dual-stack (IPv4 peers are then addressed as `::ffff:a.b.c.d`).
    private let dualStack: Bool
    /// The links' thread waits here: its mailbox takes the commands; no signals (they are the program's).
    let runner: LoopRunner<Command>
    var mailbox: EventMailbox<Command> { runner.mailbox }
    let changes = Broadcast<RemoteSession.PeerChange>()
    let messages = Broadcast<RemoteSession.Message>(bufferLimit: RemoteSession.inboxLimit, holdsUntilSubscribed: true)
    let finished = OneShot<Void>()
    private let published = Mutex(Published())
    let finder: (any PeerFinder)?
    let logger: Logger

    init(_ options: Options, finder: (any PeerFinder)?, logger: Logger) throws(AnalogRemoteError) {
        self.options = options
        self.finder = finder
        self.logger = logger
        do {
            socket = try UDPSocket.bind(port: options.port)
            // A hello to a closed port then fails at once (SessionLinks drains the queue).
            try socket.enableErrorQueue()
            let local = try socket.localAddress()
            port = local.port
            dualStack = local.family == .inet6
            runner = try LoopRunner<Command>(stopOn: StopSignals.none, mailboxCapacity: 4096)
        } catch {
            throw AnalogRemoteError(.networkUnavailable, "cannot listen on udp port \(options.port): \(error) (another program there? pass port: 0 for any free port)")
        }
    }

    var connected: [RemoteSession.Peer] { published.withLock { $0.peers } }
    var available: [PeerDirectory.Sighting] { published.withLock { $0.available } }
    var discovery: RemoteSession.DiscoveryState { published.withLock { $0.discovery } }
    var isClosed: Bool { published.withLock { $0.closed } }
    var droppedMessages: Int { published.withLock { $0.dropped } }
    var bounds: Bounds {
        get { published.withLock { $0.bounds } }
        set { published.withLock { $0.bounds = newValue } }
    }

    /// Hands a message to the program; one that finds the inbox full is counted and, the first
    /// time after a delivery, logged as a warning.
    func deliver(_ message: RemoteSession.Message) {
        let delivered = messages.yield(message)
        let warn = published.withLock { p -> Bool in
            defer { p.overflowing = !delivered }
            if !delivered { p.dropped += 1 }
            return !delivered && !p.overflowing
        }
        if warn {
            logger.warning("a message was dropped: \(RemoteSession.inboxLimit) are waiting to be read; iterate messages sooner (droppedMessages counts them)",
                           metadata: ["peer": "\(message.peer)", "mode": "\(message.mode)"])
        }
    }

    /// Announces this session and starts browsing. Without a responder the session goes on by
    /// address: the state says why, and the log says it once.
    func startDiscovery() {
        guard let finder else { return }
        let session = options.session
        let announcement = PeerAnnouncement(session: session, displayName: options.displayName,
                                            peerID: Self.idText(options.peerID), port: port)
        do {
            try finder.start(announcement) { [mailbox] in mailbox.post(.discovered($0)) }
            setDiscovery(.active)
            logger.debug("announcing and browsing by DNS-SD", metadata: ["session": "\(session)", "subtype": "\(session.subtype)"])
        } catch {
            let why: String
            if case .noResponder = error { why = "no mDNS responder (avahi-daemon) is running" } else { why = "\(error)" }
            setDiscovery(.unavailable(AnalogRemoteError(.discoveryUnavailable,
                "\(why): peers are not found by name; connect by address (HOST:PORT), or start avahi-daemon and join again")))
            logger.warning("peers are not found by DNS-SD: \(why); connect by address")
        }
    }

    /// Sets the discovery state; true when it changed.
    @discardableResult
    func setDiscovery(_ state: RemoteSession.DiscoveryState) -> Bool {
        published.withLock { p in
            defer { p.discovery = state }
            return p.discovery != state
        }
    }

    func post(_ command: Command) { mailbox.post(command) }

    /// `address` as this socket can send to it (an IPv4 address, mapped, on a dual-stack socket).
    func reachable(_ address: SocketAddress) -> SocketAddress {
        guard dualStack, address.family == .inet,
              let mapped = try? SocketAddress.resolve(host: "::ffff:" + address.host, port: address.port).first else { return address }
        return mapped
    }

    static func idText(_ id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    func start() {
        let thread = Thread { [self] in
            var links = Links(engine: self)
            links.run()
            finder?.stop()
            published.withLock {
                $0.peers = []
                $0.available = []
                $0.closed = true
            }
            socket.close()
            changes.finish()
            messages.finish()
            finished.resolve(())
        }
        thread.name = "RemoteSession"
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// What other threads read, and what a new ``RemoteSession/peerChanges`` starts with: the
    /// available peers, then the connected ones.
    func publish(connected: [RemoteSession.Peer], available: [PeerDirectory.Sighting]) {
        published.withLock {
            $0.peers = connected
            $0.available = available
        }
        changes.setReplay(available.map { RemoteSession.PeerChange(peer: $0.peer, state: .available) }
                          + connected.map { RemoteSession.PeerChange(peer: $0, state: .connected) })
    }
}
