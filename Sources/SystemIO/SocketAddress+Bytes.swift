#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SocketAddress {
    /// An address from raw record data: 4 bytes (DNS A) or 16 bytes (DNS AAAA), in network order.
    /// `scopeID` (an interface index) is kept only for IPv6 link-local addresses (fe80::/10),
    /// which are unusable without it. Nil for any other length.
    package init?(addressBytes bytes: [UInt8], port: UInt16, scopeID: UInt32 = 0) {
        switch bytes.count {
        case 4:
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin_addr) { $0.copyBytes(from: bytes) }
            storage = withUnsafeBytes(of: &sa) { RawSockAddr($0) }
        case 16:
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin6_addr) { $0.copyBytes(from: bytes) }
            if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { sa.sin6_scope_id = scopeID }
            storage = withUnsafeBytes(of: &sa) { RawSockAddr($0) }
        default:
            return nil
        }
    }

    /// True for IPv6 link-local (fe80::/10) and IPv4 link-local (169.254/16) addresses.
    package var isLinkLocal: Bool {
        storage.withUnsafeBytes { raw in
            if family == .inet {
                let a = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                return withUnsafeBytes(of: a) { $0[0] == 169 && $0[1] == 254 }
            }
            let a = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: a) { $0[0] == 0xFE && $0[1] & 0xC0 == 0x80 }
        }
    }

    /// The IPv6 scope id (interface index), 0 for IPv4 or global addresses.
    package var scopeID: UInt32 {
        family == .inet6 ? storage.withUnsafeBytes { $0.loadUnaligned(as: sockaddr_in6.self).sin6_scope_id } : 0
    }
}

extension SocketAddress {
    /// The address itself in network order: 4 bytes (IPv4) or 16 bytes (IPv6), what
    /// ``init(addressBytes:port:scopeID:)`` takes back (with ``port`` and ``scopeID``).
    package var addressBytes: [UInt8] {
        storage.withUnsafeBytes { raw in
            if family == .inet {
                let a = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                return withUnsafeBytes(of: a) { Array($0) }
            }
            let a = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: a) { Array($0) }
        }
    }
}
