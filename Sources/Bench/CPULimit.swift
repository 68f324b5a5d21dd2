#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// A cgroup of the bench's own that caps the CPU of the processes moved into it: a Pi-class
/// budget on this machine. cgroup v1's `cpu` controller (`cpu.cfs_quota_us` per
/// `cpu.cfs_period_us`) or cgroup v2's `cpu.max`, whichever this machine mounts writable.
///
/// The group is made under the controller's root, named for the bench's pid, and removed by
/// ``remove()`` once the processes in it have exited (a cgroup with members cannot be removed).
struct CPULimit {
    let directory: String
    let version: Int
    let percent: Int

    static let period = 100_000   // µs: the kernel's default CFS period

    static func make(percent: Int) throws(BenchError) -> CPULimit {
        guard let (root, version) = controllerRoot() else {
            throw .setup("no cgroup CPU controller is mounted (cgroup v1 `cpu`, or v2 with `cpu` in cgroup.controllers); the 10 %-of-a-core rows need one")
        }
        let directory = "\(root)/analog-remote-bench-\(getpid())"
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw .setup("cannot make the cgroup \(directory): \(String(cString: strerror(errno))) (the small-CPU rows need to create a cgroup: run the bench as root, or in a delegated cgroup)")
        }
        let limit = CPULimit(directory: directory, version: version, percent: percent)
        let quota = period * percent / 100
        do {
            if version == 1 {
                try limit.set("cpu.cfs_period_us", "\(period)")
                try limit.set("cpu.cfs_quota_us", "\(quota)")
            } else {
                try limit.set("cpu.max", "\(quota) \(period)")
            }
        } catch {
            limit.remove()
            throw error
        }
        return limit
    }

    /// Why no group can be made here, or nil if one can (made and removed again to find out).
    static func unavailable() -> String? {
        do {
            let probe = try make(percent: 100)
            probe.remove()
            return nil
        } catch {
            return error.description
        }
    }

    /// Moves every thread of `pid` into the group.
    func add(pid: pid_t) throws(BenchError) {
        try set("cgroup.procs", "\(pid)")
    }

    /// Periods in which the group ran out of its quota (cpu.stat: `nr_throttled`).
    var throttledPeriods: Int? {
        guard let text = try? String(contentsOfFile: "\(directory)/cpu.stat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == "nr_throttled" { return Int(parts[1]) }
        }
        return nil
    }

    /// Removes the group; its processes must have exited. Best effort (a leftover empty group
    /// costs nothing and is named for the bench's pid).
    func remove() {
        rmdir(directory)
    }

    private func set(_ file: String, _ value: String) throws(BenchError) {
        let path = "\(directory)/\(file)"
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .setup("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(value.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else {
            throw .setup("cannot write \(value) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The writable root of a CPU controller, from /proc/self/mounts: a v1 `cgroup` mount whose
    /// options include `cpu`, else a `cgroup2` mount that offers `cpu` to its children.
    static func controllerRoot() -> (String, Int)? {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        var v2: String?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 4 else { continue }
            let (path, type, options) = (String(fields[1]), fields[2], fields[3].split(separator: ","))
            if type == "cgroup", options.contains("cpu"), access(path, W_OK) == 0 { return (path, 1) }
            if type == "cgroup2", v2 == nil,
               let controllers = try? String(contentsOfFile: "\(path)/cgroup.subtree_control", encoding: .utf8),
               controllers.split(whereSeparator: \.isWhitespace).contains("cpu"), access(path, W_OK) == 0 {
                v2 = path
            }
        }
        return v2.map { ($0, 2) }
    }
}
