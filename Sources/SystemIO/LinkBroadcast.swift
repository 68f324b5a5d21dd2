#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where one datagram reaches every host on this machine's links: each up, non-loopback IPv4
/// interface's broadcast address (its subnet's, e.g. `192.168.1.255`, not 255.255.255.255, so
/// it leaves by that interface) and IPv6 all-nodes, `ff02::1`, scoped to each up, non-loopback
/// interface that can multicast and has an IPv6 address. Every host's IPv6 stack is a member of
/// all-nodes, so a socket bound to `[::]` on the port gets it without joining anything.
///
/// The trap: an IPv4 socket may send to a broadcast address only with `SO_BROADCAST` set
/// (``UDPSocket/allowBroadcast()``), else `sendto` fails with EACCES.
package enum LinkBroadcast {
    /// The destinations at `port`, IPv4 first, each once; empty on a machine with only loopback
    /// (or when the interfaces cannot be read).
    package static func destinations(port: UInt16) -> [SocketAddress] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var ipv4: [SocketAddress] = []
        var ipv6: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let sa = entry.pointee.ifa_addr else { continue }
            switch Int32(sa.pointee.sa_family) {
            case AF_INET where flags & Int32(IFF_BROADCAST) != 0:
                guard let b = entry.pointee.ifa_ifu.ifu_broadaddr, Int32(b.pointee.sa_family) == AF_INET else { continue }
                var a = UnsafeRawPointer(b).loadUnaligned(as: sockaddr_in.self)
                // An address added without one (`ip addr add` without `brd`) reports 0.0.0.0,
                // which would mean this host: nothing to broadcast to on it.
                guard a.sin_addr.s_addr != 0 else { continue }
                a.sin_port = port.bigEndian
                let address = SocketAddress(raw: &a, length: MemoryLayout<sockaddr_in>.size)
                if !ipv4.contains(address) { ipv4.append(address) }
            case AF_INET6 where flags & Int32(IFF_MULTICAST) != 0:
                let index = if_nametoindex(entry.pointee.ifa_name)
                guard index != 0 else { continue }
                var a = sockaddr_in6()
                a.sin6_family = sa_family_t(AF_INET6)
                a.sin6_port = port.bigEndian
                withUnsafeMutableBytes(of: &a.sin6_addr) { $0.copyBytes(from: allNodes) }
                a.sin6_scope_id = index
                let address = SocketAddress(raw: &a, length: MemoryLayout<sockaddr_in6>.size)
                if !ipv6.contains(address) { ipv6.append(address) }
            default:
                continue
            }
        }
        return ipv4 + ipv6
    }

    /// ff02::1, the link-local all-nodes group.
    static let allNodes: [UInt8] = [0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01]
}

extension UDPSocket {
    /// Lets this (IPv4) socket send to broadcast addresses (`SO_BROADCAST`).
    package func allowBroadcast() throws(SystemError) {
        var on: Int32 = 1
        let fd = descriptor.rawValue
        try Syscall.call("setsockopt(SO_BROADCAST)") {
            setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }
}
