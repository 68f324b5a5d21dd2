#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Lines to stdout (fd 1), written at once and unbuffered: a script reading a pipe sees each
/// line as it happens (`print` would hold it in the C buffer), and no C `stdout` global is used.
enum StandardOutput {
    static func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return write(STDOUT_FILENO, base + offset, raw.count - offset)
            }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
            offset += n
        }
    }
}
