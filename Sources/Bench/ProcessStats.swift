#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// What /proc says about a process and its UDP socket.
enum ProcessStats {
    /// User + system CPU time of a whole process (every thread), in clock ticks.
    static func cpuTicks(pid: pid_t) -> Int? {
        statTicks("/proc/\(pid)/stat")
    }

    /// User + system ticks of the main thread (where `receive` runs its loop) and of all the
    /// others together (the board link's thread, libdispatch's). Thread names do not help here:
    /// Foundation's `Thread.name` does not reach the kernel's `comm` on Linux.
    static func threadTicks(pid: pid_t) -> [String: Int] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [:] }
        var out: [String: Int] = [:]
        for tid in tasks {
            guard let ticks = statTicks("/proc/\(pid)/task/\(tid)/stat") else { continue }
            out[tid == String(pid) ? "main thread" : "other threads", default: 0] += ticks
        }
        return out
    }

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime + stime from a `stat` file. The name field is in parentheses and may hold spaces,
    /// so fields are counted after the last `)`: state is field 3, utime 14, stime 15.
    static func statTicks(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// The kernel's drop counter for the UDP socket bound to `port`, from /proc/net/udp6 (the
    /// receiver binds a dual-stack `[::]` socket) or /proc/net/udp.
    static func udpDrops(port: UInt16) -> Int? {
        let wanted = ":" + String(format: "%04X", port)
        for table in ["/proc/net/udp6", "/proc/net/udp"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count >= 13, fields[1].hasSuffix(wanted) else { continue }
                return Int(fields[fields.count - 1])
            }
        }
        return nil
    }

    /// `summary packets=… state=…` → ["packets": …].
    static func parseSummary(_ line: String?) -> [String: Int] {
        guard let line else { return [:] }
        var out: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let kv = field.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }
}
