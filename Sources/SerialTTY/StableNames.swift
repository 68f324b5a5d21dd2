#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The udev symlinks that point at a device: `/dev/programland`, `/dev/programland-HIDPC`
/// (packaging/70-analog-remote.rules), so `boards` and `doctor` can show the name that survives
/// replugging instead of `ttyACM0`, which may become `ttyACM1`.
package enum StableNames {
    /// Links directly in `devDirectory` whose name starts with `prefix` and that resolve to
    /// `device`, sorted (the shorter, generic name first).
    package static func links(to device: String, in devDirectory: String = "/dev", prefix: String = "programland") -> [String] {
        guard let target = resolved(device), let dir = opendir(devDirectory) else { return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix) else { continue }
            let path = "\(devDirectory)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK, resolved(path) == target else { continue }
            out.append(path)
        }
        return out.sorted { ($0.count, $0) < ($1.count, $1) }
    }

    static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
