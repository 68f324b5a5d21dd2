import ControlPlane
import RemoteWire
import SystemIO

/// The dashboard's Stop all before any lookup (Protocol.md §7.6): the signed stop for the whole
/// session to every host on the links (``LinkBroadcast``: each interface's IPv4 broadcast
/// address and IPv6 all-nodes, at the default port), ``TeacherDelivery/broadcastTimes`` times,
/// so every robot of the session there stops at once — the ones no row knows yet too. The rows'
/// own stops (aimed at each proven robot) go out beside it and are what the rows show; the
/// replies to this one are read and dropped (the rows learn each robot's state from its own).
/// Used on the teacher link's thread only.
struct TeacherBroadcast {
    private var delivery: TeacherDelivery<SocketAddress>
    private var sockets: [SocketAddress.Family: UDPSocket] = [:]
    private var buffer = [UInt8](repeating: 0, count: 2048)

    /// Where the stop goes, asked at each Stop all (interfaces come and go).
    private let destinations: @Sendable () -> [SocketAddress]

    init(session: String, macKey: [UInt8],
         destinations: @escaping @Sendable () -> [SocketAddress] = { LinkBroadcast.destinations(port: ReceiverPort.standard) }) {
        delivery = TeacherDelivery(settings: .init(session: session, macKey: macKey, connection: UInt32.random(in: 1...UInt32.max)))
        self.destinations = destinations
    }

    /// Queues the stop to every destination found now (one nonce for all); ``flush(now:)`` sends it.
    mutating func stop(now: ContinuousClock.Instant) {
        let nonce = UInt64.random(in: 1...UInt64.max)
        for address in destinations() {
            delivery.send(.stop, to: address, target: "", times: TeacherDelivery<SocketAddress>.broadcastTimes, nonce: nonce,
                          wallMillis: WallClock.unixMillis(), now: now)
        }
    }

    /// Sends what is due, and drops the replies read so far.
    mutating func flush(now: ContinuousClock.Instant) {
        for (datagram, address) in delivery.due(now: now) {
            _ = try? socket(for: address)?.send(datagram, to: address)
        }
        for s in sockets.values {
            while let _ = try? s.receive(into: &buffer) {}
        }
    }

    /// When the next repeat is due; nil: none.
    var nextDeadline: ContinuousClock.Instant? { delivery.nextDeadline }

    func close() {
        for s in sockets.values { s.close() }
    }

    /// One socket per address family, made on first use (an IPv4 one may broadcast).
    private mutating func socket(for address: SocketAddress) -> UDPSocket? {
        if let s = sockets[address.family] { return s }
        guard let s = try? UDPSocket.sender(for: address) else { return nil }
        if address.family == .inet { try? s.allowBroadcast() }
        sockets[address.family] = s
        return s
    }
}
