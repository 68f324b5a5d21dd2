#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a whole (small) file: config files, scripts.
package enum FileContents {
    /// The bytes of `path`; a file larger than `limit` is refused with EFBIG (so a path to a
    /// device or a huge file cannot grow memory without end).
    package static func read(path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        let fd = try Syscall.call("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        let file = Descriptor(adopting: fd, label: path)
        var bytes: [UInt8] = []
        while true {
            guard let chunk = try file.read(max: 65536) else { continue }
            if chunk.isEmpty { return bytes }
            bytes += chunk
            if bytes.count > limit { throw SystemError(call: "read", errno: EFBIG, subject: path) }
        }
    }
}
