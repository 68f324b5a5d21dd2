import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's view of a receiver's UDP socket, from /proc/net/udp6 (our receivers bind `[::]`
/// dual-stack): datagrams still queued and datagrams dropped because the queue was full. Tests
/// wait on it to know that everything sent has been read, and count drops into their sums.
public enum UDPQueue {
    public static func stats(port: UInt16) -> (queued: Int, drops: Int)? {
        guard let table = try? String(contentsOfFile: "/proc/net/udp6", encoding: .utf8) else { return nil }
        let wanted = ":" + String(format: "%04X", port)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count >= 13, fields[1].hasSuffix(wanted), fields[1].hasPrefix("00000000000000000000000000000000") else { continue }
            let queues = fields[4].split(separator: ":")
            guard queues.count == 2, let rx = Int(queues[1], radix: 16), let drops = Int(fields[fields.count - 1]) else { return nil }
            return (rx, drops)
        }
        return nil
    }

    /// Waits until the process listening on `port` has read everything queued on its socket.
    @discardableResult
    public static func waitUntilDrained(port: UInt16, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let stats = stats(port: port), stats.queued == 0 { return true }
            usleep(500)
        }
        return false
    }
}
