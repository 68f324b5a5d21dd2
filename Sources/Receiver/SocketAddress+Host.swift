#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

extension SocketAddress {
    /// This address with port 0: its host, as a key for "from this IP address, any port"
    /// (``KickHold``). An IPv4-mapped IPv6 source stays mapped, so it matches its own family only.
    var anyPort: SocketAddress {
        withSockAddr { sa, _ -> SocketAddress in
            if family == .inet {
                let sin = UnsafeRawPointer(sa).loadUnaligned(as: sockaddr_in.self)
                let bytes = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
                return SocketAddress(addressBytes: bytes, port: 0) ?? self
            }
            let sin6 = UnsafeRawPointer(sa).loadUnaligned(as: sockaddr_in6.self)
            let bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            return SocketAddress(addressBytes: bytes, port: 0, scopeID: sin6.sin6_scope_id) ?? self
        }
    }
}
