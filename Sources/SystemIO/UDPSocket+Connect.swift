#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UDPSocket {
    /// Connects the socket to `peer` (UDP: only sets the default destination and the only
    /// source datagrams are taken from). The point for a controller: on a connected socket the
    /// kernel reports an ICMP port unreachable as ECONNREFUSED on the next send or receive, so
    /// "nothing listens there" shows at once instead of never. Calling it again moves it to
    /// another peer.
    package func connect(to peer: SocketAddress) throws(SystemError) {
        let fd = descriptor.rawValue
        try Syscall.call("connect", subject: "udp \(peer)") {
            peer.withSockAddr { sa, len in Glibc.connect(fd, sa, len) }
        }
    }
}
