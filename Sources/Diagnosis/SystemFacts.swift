#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import SystemIO

/// One network interface as `getifaddrs` sees it.
package struct NetworkInterface: Sendable, Hashable {
    package var name: String
    package var up: Bool
    package var loopback: Bool
    package var multicast: Bool
    /// Has an IPv4 or IPv6 address.
    package var hasAddress: Bool
    /// Its IPv4 addresses, dotted (`198.18.7.1`).
    package var ipv4: [String] = []
}

package enum NetworkInterfaces {
    package static func list() -> [NetworkInterface] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var byName: [String: NetworkInterface] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            let name = String(cString: entry.pointee.ifa_name)
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            let family = entry.pointee.ifa_addr.map { Int32($0.pointee.sa_family) }
            var record = byName[name] ?? NetworkInterface(name: name, up: false, loopback: false, multicast: false, hasAddress: false)
            if byName[name] == nil { order.append(name) }
            record.up = record.up || flags & Int32(IFF_UP) != 0 && flags & Int32(IFF_RUNNING) != 0
            record.loopback = record.loopback || flags & Int32(IFF_LOOPBACK) != 0
            record.multicast = record.multicast || flags & Int32(IFF_MULTICAST) != 0
            if family == AF_INET || family == AF_INET6 { record.hasAddress = true }
            if family == AF_INET, let sa = entry.pointee.ifa_addr {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                var a = UnsafeRawPointer(sa).loadUnaligned(as: sockaddr_in.self).sin_addr
                if inet_ntop(AF_INET, &a, &text, socklen_t(text.count)) != nil { record.ipv4.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
            }
            byName[name] = record
            cursor = entry.pointee.ifa_next
        }
        return order.compactMap { byName[$0] }
    }
}

extension Doctor {
    /// 0 when a stream connection to the unix socket at `path` succeeds, else the errno.
    static func connectUnix(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        let owner = Descriptor(adopting: fd, label: path)
        defer { owner.close() }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        do {
            try Syscall.call("connect", subject: path) {
                withUnsafePointer(to: &address) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
            }
            return 0
        } catch {
            return error.errno
        }
    }

    static func readPid(_ path: String) -> pid_t? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return pid_t(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func userName(_ uid: uid_t) -> String? {
        guard let pw = getpwuid(uid) else { return nil }
        return String(cString: pw.pointee.pw_name)
    }

    /// The names of this process's supplementary and primary groups.
    static func processGroups() -> Set<String> {
        let count = getgroups(0, nil)
        var ids = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let n = getgroups(count, &ids)
        var out: Set<String> = []
        for gid in ids.prefix(Int(max(n, 0))) + [getegid()] {
            if let group = getgrgid(gid) { out.insert(String(cString: group.pointee.gr_name)) }
        }
        return out
    }

    /// The listed members of group `name` (from the group database).
    static func members(of name: String) -> Set<String> {
        guard let group = getgrnam(name), var member = group.pointee.gr_mem else { return [] }
        var out: Set<String> = []
        while let m = member.pointee {
            out.insert(String(cString: m))
            member += 1
        }
        return out
    }

    static func primaryGroup(of user: String) -> String? {
        guard let pw = getpwnam(user), let group = getgrgid(pw.pointee.pw_gid) else { return nil }
        return String(cString: group.pointee.gr_name)
    }

    /// The path of `name` in the usual system directories (the firewall tools live in sbin,
    /// which a user's PATH may lack).
    static func executable(_ name: String) -> String? {
        for dir in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] where access("\(dir)/\(name)", X_OK) == 0 {
            return "\(dir)/\(name)"
        }
        return nil
    }

    /// stdout of `tool arguments` when it exits 0, else nil (the firewall listings print and exit).
    static func output(of tool: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
