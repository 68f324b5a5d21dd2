#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// ICMP errors on an unconnected socket, told per destination: with the error queue on
/// (`IP_RECVERR`, `IPV6_RECVERR`), the kernel keeps each "port unreachable" (and the like) it
/// receives for a datagram we sent, with that datagram's destination. Without it Linux drops
/// them for an unconnected socket, so a peer that is not listening looks the same as a slow one.
///
/// Trap: with the queue on, a pending error also fails the next `recvfrom` once (ECONNREFUSED)
/// and makes `poll` report the socket readable until the queue is read: whoever turns it on
/// must drain it with ``nextQueuedError()`` on every wake-up.
extension UDPSocket {
    /// Turns the error queue on. Both options are tried (a dual-stack socket needs the IPv6 one
    /// for IPv4-mapped peers); it fails only when neither applies.
    package func enableErrorQueue() throws(SystemError) {
        var on: Int32 = 1
        let fd = descriptor.rawValue
        let v4 = setsockopt(fd, Int32(IPPROTO_IP), IP_RECVERR, &on, socklen_t(MemoryLayout<Int32>.size))
        let v6 = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_RECVERR, &on, socklen_t(MemoryLayout<Int32>.size))
        if v4 != 0 && v6 != 0 { throw SystemError(call: "setsockopt(IP_RECVERR)", errno: errno) }
    }

    /// The oldest queued error: the destination of the datagram it is about and its errno
    /// (ECONNREFUSED for port unreachable, EHOSTUNREACH, …; 0 when the kernel gave none).
    /// nil when the queue is empty.
    package func nextQueuedError() -> (destination: SocketAddress, errno: Int32)? {
        var storage = sockaddr_storage()
        var control = [UInt8](repeating: 0, count: 256)
        var scratch = [UInt8](repeating: 0, count: 64)
        let fd = descriptor.rawValue
        let result: (Int, socklen_t, Int) = scratch.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { ctl in
                withUnsafeMutablePointer(to: &storage) { name in
                    var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                    return withUnsafeMutablePointer(to: &vector) { v in
                        var header = msghdr()
                        header.msg_name = UnsafeMutableRawPointer(name)
                        header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                        header.msg_iov = v
                        header.msg_iovlen = 1
                        header.msg_control = ctl.baseAddress
                        header.msg_controllen = ctl.count
                        var n: Int
                        repeat {
                            n = recvmsg(fd, &header, Int32(MSG_ERRQUEUE) | Int32(MSG_DONTWAIT))
                        } while n < 0 && errno == EINTR
                        return (n, header.msg_namelen, Int(header.msg_controllen))
                    }
                }
            }
        }
        guard result.0 >= 0, result.1 > 0 else { return nil }
        let destination = withUnsafeBytes(of: &storage) { SocketAddress(raw: $0.baseAddress!, length: Int(result.1)) }
        // struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; }, then
        // struct sock_extended_err, whose first field is the errno (UInt32).
        var code: Int32 = 0
        let headerSize = ArrivalStamp.headerSize
        if result.2 >= headerSize + 4 {
            control.withUnsafeBytes { raw in
                let level = raw.load(fromByteOffset: MemoryLayout<Int>.size, as: Int32.self)
                let type = raw.load(fromByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self)
                if (level == Int32(IPPROTO_IP) && type == IP_RECVERR) || (level == Int32(IPPROTO_IPV6) && type == IPV6_RECVERR) {
                    code = Int32(bitPattern: raw.loadUnaligned(fromByteOffset: headerSize, as: UInt32.self))
                }
            }
        }
        return (destination, code)
    }
}
