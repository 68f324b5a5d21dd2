import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// UDP datagrams with a forged source address and port on loopback, as a classmate with a raw
/// socket sends them (needs CAP_NET_RAW: root in CI's container). IPv4 only: our receivers bind
/// `[::]` dual-stack, so a datagram from 127.0.0.1:P reaches them as from ::ffff:127.0.0.1:P —
/// exactly where a controller started with `--peer 127.0.0.1:…` sends from.
public final class SpoofedUDP {
    let descriptor: Int32

    /// Whether this process may open raw sockets (tests that spoof are skipped, with the reason
    /// shown, where it may not).
    public static var available: Bool {
        let fd = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    public init() throws {
        // IPPROTO_RAW implies IP_HDRINCL: we write the IP header; the kernel fills in the
        // checksum and total length.
        descriptor = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard descriptor >= 0 else { throw SpoofError("raw socket: errno \(errno) (needs CAP_NET_RAW)") }
    }

    deinit { close(descriptor) }

    /// Sends `payload` to 127.0.0.1:`toPort` as if from 127.0.0.1:`fromPort`.
    public func send(_ payload: [UInt8], fromPort: UInt16, toPort: UInt16) throws {
        let udpLength = 8 + payload.count
        var packet: [UInt8] = [
            0x45, 0, 0, 0,            // IPv4, header 20 bytes; total length filled in by the kernel
            0, 0, 0x40, 0,            // id (kernel), don't fragment
            64, UInt8(IPPROTO_UDP), 0, 0, // TTL, protocol, checksum (kernel)
            127, 0, 0, 1,             // source
            127, 0, 0, 1,             // destination
        ]
        packet += [UInt8(fromPort >> 8), UInt8(fromPort & 0xFF), UInt8(toPort >> 8), UInt8(toPort & 0xFF),
                   UInt8(udpLength >> 8), UInt8(udpLength & 0xFF), 0, 0]   // UDP checksum 0: none (IPv4)
        packet += payload
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        let sent = packet.withUnsafeBytes { bytes in
            withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == packet.count else { throw SpoofError("raw send: errno \(errno)") }
    }
}

public struct SpoofError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Copies of the UDP datagrams that reach this host over IPv4, as an on-path listener sees
/// them (a raw socket: CAP_NET_RAW). Sees only what arrives after it was opened.
public final class UDPSniffer {
    let descriptor: Int32

    public init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_UDP))
        guard descriptor >= 0 else { throw SpoofError("raw socket: errno \(errno) (needs CAP_NET_RAW)") }
    }

    deinit { close(descriptor) }

    /// The first datagram to 127.0.0.1:`port` whose payload satisfies `wanted`, within `timeout`.
    public func first(toPort port: UInt16, timeout: Duration,
                      where wanted: ([UInt8]) -> Bool) -> (sourcePort: UInt16, payload: [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline - .now
            let ms = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&p, 1, ms) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard n >= 28 else { continue }
            let ihl = Int(buffer[0] & 0x0F) * 4
            guard n >= ihl + 8, buffer[9] == UInt8(IPPROTO_UDP), Array(buffer[16..<20]) == [127, 0, 0, 1] else { continue }
            let source = UInt16(buffer[ihl]) << 8 | UInt16(buffer[ihl + 1])
            let destination = UInt16(buffer[ihl + 2]) << 8 | UInt16(buffer[ihl + 3])
            let payload = Array(buffer[(ihl + 8)..<n])
            if destination == port, wanted(payload) { return (source, payload) }
        }
        return nil
    }
}
