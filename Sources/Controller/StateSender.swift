import RemoteWire
import SystemIO

/// Puts state packets on the wire: one UDP socket per address family, opened on first use, so
/// the destination can move between IPv4 and IPv6. A failed send is counted and remembered, never
/// thrown: the network may come back (Wi-Fi roaming), and the next packet replaces a lost one.
final class StateSender {
    private var sockets: [SocketAddress.Family: UDPSocket] = [:]
    /// The peer each socket is connected to (a connected socket hears ICMP port unreachable).
    private var connected: [SocketAddress.Family: SocketAddress] = [:]
    /// Told about every failed send (the control session turns ECONNREFUSED into "no receiver").
    var onError: ((SystemError) -> Void)?
    private var packet = [UInt8](repeating: 0, count: StatePacket.size)
    /// The peer the fatal-signal guard sends its neutral packets to.
    private var armedPeer: SocketAddress?
    private(set) var sent = 0
    private(set) var failed = 0
    /// Why the latest send failed; nil once a send succeeds again.
    private(set) var lastError: SystemError?
    /// Turns the 8-byte packet into what goes on the wire (the authenticated envelope under
    /// `--secret`); nil = hold it back (no connection yet). Unset: the packet as it is.
    var wrap: (([UInt8]) -> [UInt8]?)?

    private let armsFatalSignalGuard: Bool

    init(armsFatalSignalGuard: Bool = true) {
        self.armsFatalSignalGuard = armsFatalSignalGuard
    }

    /// Opens the socket for `peer`'s family now (so a failure shows before anything is sent).
    func prepare(for peer: SocketAddress) throws(SystemError) {
        _ = try socket(for: peer)
    }

    /// Returns whether the datagram went out.
    @discardableResult
    func send(_ state: ControllerState, to peer: SocketAddress) -> Bool {
        do {
            let socket = try socket(for: peer)
            if armsFatalSignalGuard, armedPeer != peer {
                FatalSignalGuard.armNeutral(socket: socket.descriptor.rawValue, peer: peer)
                armedPeer = peer
            }
            StatePacket.encode(state, into: &packet)
            let wire: [UInt8]
            if let wrap {
                guard let wrapped = wrap(packet) else { return false }
                wire = wrapped
            } else {
                wire = packet
            }
            if try socket.send(wire, to: peer) {
                sent += 1
                lastError = nil
                return true
            }
            failed += 1   // socket buffer full: dropped, the next one replaces it
            return false
        } catch {
            failed += 1
            lastError = error
            onError?(error)
            return false
        }
    }

    func close() {
        if armsFatalSignalGuard { FatalSignalGuard.disarmNeutral() }
        armedPeer = nil
        for socket in sockets.values { socket.close() }
        sockets.removeAll()
        connected.removeAll()
    }

    /// The socket states to `peer` go out on (opened on first use). The classroom control session
    /// sends and reads on it too: a receiver knows a controller by its source address and port.
    func socket(for peer: SocketAddress) throws(SystemError) -> UDPSocket {
        let s: UDPSocket
        if let existing = sockets[peer.family] {
            s = existing
        } else {
            s = try UDPSocket.sender(for: peer)
            sockets[peer.family] = s
        }
        if connected[peer.family] != peer {
            // Connected, so that ECONNREFUSED (nothing listens at the peer) reaches us.
            try s.connect(to: peer)
            connected[peer.family] = peer
        }
        return s
    }
}
