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
        // A regular file's size is known up front: one too large is refused before any read.
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) > limit {
            throw SystemError(call: "read", errno: EFBIG, subject: path)
        }
        var bytes: [UInt8] = []
        if info.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(Int(info.st_size)) }
        while true {
            guard let chunk = try file.read(max: 65536) else { continue }
            if chunk.isEmpty { return bytes }
            bytes += chunk
            if bytes.count > limit { throw SystemError(call: "read", errno: EFBIG, subject: path) }
        }
    }
}
