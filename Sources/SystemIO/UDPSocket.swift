#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-blocking UDP socket. ``bind(port:)`` listens on IPv6 and IPv4 at once (a dual-stack
/// `[::]` socket with IPV6_V6ONLY off), falling back to IPv4 only where IPv6 is absent.
package final class UDPSocket: Sendable {
    package let descriptor: Descriptor

    init(descriptor: Descriptor) { self.descriptor = descriptor }

    /// Binds to `port` on every address (0 = any free port; read ``localAddress()``).
    package static func bind(port: UInt16, host: String = "") throws(SystemError) -> UDPSocket {
        if host.isEmpty {
            if let s = try? open(family: AF_INET6, dualStack: true) {
                var a = sockaddr_in6()
                a.sin6_family = sa_family_t(AF_INET6)
                a.sin6_port = port.bigEndian
                a.sin6_addr = in6addr_any
                try s.bind(SocketAddress(raw: &a, length: MemoryLayout<sockaddr_in6>.size))
                return s
            }
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            let s = try open(family: AF_INET, dualStack: false)
            try s.bind(SocketAddress(raw: &a, length: MemoryLayout<sockaddr_in>.size))
            return s
        }
        guard let address = try? SocketAddress.resolve(host: host, port: port, passive: true).first else {
            throw SystemError(call: "getaddrinfo", errno: EINVAL, subject: host)
        }
        let s = try open(family: address.family == .inet6 ? AF_INET6 : AF_INET, dualStack: false)
        try s.bind(address)
        return s
    }

    /// An unbound socket for sending to `peer` (the kernel picks the source port on first send).
    package static func sender(for peer: SocketAddress) throws(SystemError) -> UDPSocket {
        try open(family: peer.family == .inet6 ? AF_INET6 : AF_INET, dualStack: false)
    }

    static func open(family: Int32, dualStack: Bool) throws(SystemError) -> UDPSocket {
        let fd = try Syscall.call("socket") {
            socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let s = UDPSocket(descriptor: Descriptor(adopting: fd, label: "udp"))
        if family == AF_INET6 {
            var off: Int32 = dualStack ? 0 : 1
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
        }
        return s
    }

    func bind(_ address: SocketAddress) throws(SystemError) {
        let fd = descriptor.rawValue
        try Syscall.call("bind", subject: "udp port \(address.port)") {
            address.withSockAddr { sa, len in Glibc.bind(fd, sa, len) }
        }
    }

    /// Asks for a receive buffer of `bytes` (the kernel caps it at net.core.rmem_max and doubles
    /// it for its own bookkeeping). A larger buffer lets a burst from one source be read and
    /// rate-limited by us instead of overflowing the kernel queue and taking the owner's
    /// packets with it.
    package func setReceiveBufferSize(_ bytes: Int32) throws(SystemError) {
        var size = bytes
        let fd = descriptor.rawValue
        try Syscall.call("setsockopt(SO_RCVBUF)") {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Asks the kernel to stamp every datagram with the time it arrived (`SO_TIMESTAMPNS`,
    /// CLOCK_REALTIME), read back with ``DatagramBatch/age(_:at:)``. A receiver that was not
    /// scheduled for a while can then tell a datagram that waited in its queue from one that
    /// was sent late.
    package func enableArrivalTimestamps() throws(SystemError) {
        var on: Int32 = 1
        let fd = descriptor.rawValue
        try Syscall.call("setsockopt(SO_TIMESTAMPNS)") {
            setsockopt(fd, SOL_SOCKET, ArrivalStamp.option, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    package func localAddress() throws(SystemError) -> SocketAddress {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = descriptor.rawValue
        try Syscall.call("getsockname") {
            withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in getsockname(fd, sa, &len) }
            }
        }
        return withUnsafeBytes(of: &storage) { SocketAddress(raw: $0.baseAddress!, length: Int(len)) }
    }

    /// Sends one datagram. Returns false if the socket buffer is full (the datagram is dropped:
    /// state packets are unreliable by design, the next one replaces it).
    @discardableResult
    package func send(_ bytes: [UInt8], to peer: SocketAddress) throws(SystemError) -> Bool {
        let fd = descriptor.rawValue
        let sent = try Syscall.nonBlocking("sendto", subject: "udp \(peer)") {
            peer.withSockAddr { sa, len in
                bytes.withUnsafeBytes { raw in sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), sa, len) }
            }
        }
        return sent != nil
    }

    /// Receives one datagram into `buffer` (its capacity bounds the size; longer datagrams are
    /// truncated and reported with their full length). nil when nothing is waiting.
    package func receive(into buffer: inout [UInt8]) throws(SystemError) -> (length: Int, from: SocketAddress)? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = descriptor.rawValue
        let n = try Syscall.nonBlocking("recvfrom") {
            buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &storage) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                        recvfrom(fd, raw.baseAddress, raw.count, Int32(MSG_TRUNC), sa, &len)
                    }
                }
            }
        }
        guard let n else { return nil }
        let from = withUnsafeBytes(of: &storage) { SocketAddress(raw: $0.baseAddress!, length: Int(len)) }
        return (n, from)
    }

    /// Waits up to `timeout` for a datagram.
    package func receive(into buffer: inout [UInt8], timeout: Duration) throws(SystemError) -> (length: Int, from: SocketAddress)? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let got = try receive(into: &buffer) { return got }
            let left = deadline - .now
            if left <= .zero { return nil }
            _ = try Poller.wait(for: descriptor.rawValue, events: .readable, timeout: left)
        }
    }

    package func close() { descriptor.close() }
}
