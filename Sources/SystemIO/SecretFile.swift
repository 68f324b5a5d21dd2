#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files that hold secrets (a teacher key, a robot's secret, a config with one inline), read the
/// way ssh reads a private key: refused when anyone but the owner may read or write it.
package enum SecretFile {
    /// The permission bits that must all be clear: any access by the group or others.
    package static let forbiddenBits: mode_t = 0o077

    /// Why `path` may not hold a secret (one line that says how to fix it), or nil when it may.
    /// Checked on the open file, so what is checked is what is read.
    package static func problem(descriptor fd: Int32, path: String) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return "\(path): cannot stat it (errno \(errno))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        let mode = info.st_mode & 0o7777
        guard mode & forbiddenBits == 0 else {
            let octal = String(mode, radix: 8)
            return "\(path) holds a secret but its group or others may read it (mode 0\(octal)): run chmod 600 \(path)"
        }
        return nil
    }

    /// Permission check of a file read elsewhere (a config file holding a secret inline).
    package static func problem(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "\(path): \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        return problem(descriptor: fd, path: path)
    }

    /// The text of a secret file, without surrounding whitespace (a trailing newline). Refused:
    /// a file the group or others may access, one that is not a regular file, over 4 KiB, empty
    /// or not UTF-8. The error is one line that names the file and says how to fix it.
    package static func read(path: String) throws(SecretFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let why = errno == ELOOP ? "is a symbolic link (give the file itself)" : String(cString: strerror(errno))
            throw SecretFileError("\(path): \(why)")
        }
        let file = Descriptor(adopting: fd, label: path)
        if let problem = problem(descriptor: fd, path: path) { throw SecretFileError(problem) }
        var bytes: [UInt8] = []
        do {
            while true {
                guard let chunk = try file.read(max: 4096) else { continue }
                if chunk.isEmpty { break }
                bytes += chunk
                if bytes.count > 4096 { throw SecretFileError("\(path) is over 4 KiB: it should hold one key") }
            }
        } catch let error as SecretFileError {
            throw error
        } catch {
            throw SecretFileError("\(path): \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw SecretFileError("\(path) is not UTF-8 text") }
        let trimmed = text.trimmingWhitespace
        guard !trimmed.isEmpty else { throw SecretFileError("\(path) is empty") }
        return trimmed
    }
}

/// A secret file refused: one line naming the file and what to do.
package struct SecretFileError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
