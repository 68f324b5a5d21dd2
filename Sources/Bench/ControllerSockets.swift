#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// The controllers of the scale and small-CPU rows: `count` plain UDP sockets of the bench, each
/// its own source port, sending to one receiver on 127.0.0.1. Closed when released.
final class ControllerSockets {
    private var descriptors: [Int32] = []
    private var address = sockaddr_in()

    init(count: Int, port: UInt16) throws(BenchError) {
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .setup("controller socket: \(SystemError(call: "socket", errno: errno).reason)") }
            descriptors.append(fd)
        }
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
    }

    deinit { for fd in descriptors { close(fd) } }

    /// Sends `packet` from controller `index`; true when the whole datagram went out.
    func send(_ packet: [UInt8], from index: Int) -> Bool {
        let fd = descriptors[index]
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, packet, packet.count, 0, sa, socklen_t(MemoryLayout<sockaddr_in>.size)) == packet.count
            }
        }
    }
}
