import ControlPlane
import Foundation
import Synchronization
import SystemIO

/// The I/O of a ``RemoteSession``: one UDP socket and one thread polling it together with a
/// command mailbox and the next timer (retransmission, ping, silence). Everything mutable lives
/// on that thread (``Links``); other threads post commands and read the published peer list.
final class SessionEngine: Sendable {
    struct Options: Sendable {
        var sessionID: String
        var displayName: String
        var peerID: UInt64
        var port: UInt16
        var disconnectTimeout: Duration
    }

    enum Command: Sendable {
        case connect(SocketAddress, OneShot<Result<RemoteSession.Peer, AnalogRemoteError>>)
        case send([UInt8], to: Set<String>?, mode: RemoteSession.SendMode)
        case disconnect(String)
        case close
    }

    /// Application data of a ``RemoteSession`` travels on this `data`/`datagram` channel
    /// (channel 1 is the button game's, Protocol.md §7.8).
    static let channel: UInt8 = 2

    let options: Options
    let socket: UDPSocket
    let port: UInt16
    /// Whether the socket is dual-stack (IPv4 peers are then addressed as `::ffff:a.b.c.d`).
    private let dualStack: Bool
    let mailbox: EventMailbox<Command>
    let changes = Broadcast<RemoteSession.PeerChange>()
    let messages = Broadcast<RemoteSession.Message>()
    let finished = OneShot<Void>()
    private let published = Mutex<(peers: [RemoteSession.Peer], closed: Bool)>(([], false))

    init(_ options: Options) throws(AnalogRemoteError) {
        self.options = options
        do {
            socket = try UDPSocket.bind(port: options.port)
            let local = try socket.localAddress()
            port = local.port
            dualStack = local.family == .inet6
            mailbox = try EventMailbox<Command>(capacity: 4096)
        } catch {
            throw AnalogRemoteError(.networkUnavailable, "cannot listen on udp port \(options.port): \(error) (another program there? pass port: 0 for any free port)")
        }
    }

    var connected: [RemoteSession.Peer] { published.withLock { $0.peers } }
    var isClosed: Bool { published.withLock { $0.closed } }

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
            published.withLock { $0 = ([], true) }
            socket.close()
            changes.finish()
            messages.finish()
            finished.resolve(())
        }
        thread.name = "RemoteSession"
        thread.stackSize = 512 * 1024
        thread.start()
    }

    func publish(_ peers: [RemoteSession.Peer]) {
        published.withLock { $0.peers = peers }
        changes.setReplay(peers.map { RemoteSession.PeerChange(peer: $0, state: .connected) })
    }
}
