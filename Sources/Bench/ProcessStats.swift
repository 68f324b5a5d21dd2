#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// What /proc says about a process and its UDP socket.
enum ProcessStats {
    /// CPU time of a whole process (every thread): user and system clock ticks from
    /// /proc/PID/stat, and nanoseconds on a CPU from each thread's schedstat (finer: a tick is
    /// 10 ms, a 2 s window of a quiet receiver holds a handful).
    struct CPU: Sendable {
        var user = 0, system = 0
        var nanoseconds: Int64 = 0
        /// Main thread (where `receive` runs its loop) and all other threads, nanoseconds.
        var threads: [String: Int64] = [:]
    }

    static func cpu(pid: pid_t) -> CPU {
        var out = CPU()
        if let (user, system) = statTicks("/proc/\(pid)/stat") {
            out.user = user
            out.system = system
        }
        // Thread names do not help: Foundation's `Thread.name` does not reach `comm` on Linux.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in tasks {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8),
                  let first = text.split(separator: " ").first, let ns = Int64(first) else { continue }
            out.nanoseconds += ns
            out.threads[tid == String(pid) ? "main thread" : "other threads", default: 0] += ns
        }
        return out
    }

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime and stime from a `stat` file. The name field is in parentheses and may hold spaces,
    /// so fields are counted after the last `)`: state is field 3, utime 14, stime 15.
    static func statTicks(_ path: String) -> (user: Int, system: Int)? {
        (try? String(contentsOfFile: path, encoding: .utf8)).flatMap(statTicks(text:))
    }

    static func statTicks(text: String) -> (user: Int, system: Int)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return (user, system)
    }

    /// The kernel's drop counter for the UDP socket bound to `port`, from /proc/net/udp6 (the
    /// receiver binds a dual-stack `[::]` socket) or /proc/net/udp.
    static func udpDrops(port: UInt16) -> Int? {
        for table in ["/proc/net/udp6", "/proc/net/udp"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            if let drops = udpDrops(port: port, table: text) { return drops }
        }
        return nil
    }

    /// The drops column (the last) of the row whose local address ends in `:PORT` (hex).
    static func udpDrops(port: UInt16, table: String) -> Int? {
        let wanted = ":" + String(format: "%04X", port)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count >= 13, fields[1].hasSuffix(wanted) else { continue }
            return Int(fields[fields.count - 1])
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
