#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// Reads a small configuration file as UTF-8 text, refusing what would otherwise hang or be
/// silently misread:
///
/// - only a regular file is opened: `stat` is checked before `open`, because `open` on a FIFO
///   blocks until a writer appears (a FIFO named `x.toml` hung the receiver for good); the
///   descriptor is opened with `O_NONBLOCK` and checked again with `fstat`, so a file swapped
///   for a FIFO between the two calls cannot block either;
/// - at most `maximumSize` bytes;
/// - no NUL byte anywhere (a C parser stops at the first one and drops the rest of the file);
/// - valid UTF-8.
///
/// Errors are ``ConfigReadError``s; callers phrase them for their own kind of file.
package enum ConfigFileReader {
    package static func read(_ path: String, maximumSize: Int = 1 << 20) throws(ConfigReadError) -> String {
        var info = stat()
        do {
            try Syscall.call("stat", subject: path) { stat(path, &info) }
        } catch {
            throw .unreadable(error.reason)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .notRegular(kind(info.st_mode))
        }
        let bytes: [UInt8]
        do {
            let fd = try Syscall.call("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
            let file = Descriptor(adopting: fd, label: path)
            var again = stat()
            try Syscall.call("fstat", subject: path) { fstat(fd, &again) }
            guard again.st_mode & S_IFMT == S_IFREG else {
                throw ConfigReadError.notRegular(kind(again.st_mode))
            }
            var all: [UInt8] = []
            // A regular file never returns EAGAIN; nil is treated as the end, not as "wait".
            while let chunk = try file.read(max: 65536), !chunk.isEmpty {
                all += chunk
                if all.count > maximumSize {
                    throw ConfigReadError.tooLarge(maximum: maximumSize)
                }
            }
            bytes = all
        } catch let error as SystemError {
            throw .unreadable(error.reason)
        } catch let error as ConfigReadError {
            throw error
        } catch {
            throw .unreadable("\(error)")
        }
        if let nul = bytes.firstIndex(of: 0) {
            let line = 1 + bytes[..<nul].lazy.filter { $0 == UInt8(ascii: "\n") }.count
            throw .nulByte(offset: nul, line: line)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .notUTF8
        }
        return text
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "something else"
        }
    }
}

/// Why a configuration file cannot be read; the caller names the file and phrases ``problem``
/// for its kind of file.
package enum ConfigReadError: Error, Hashable, Sendable {
    /// stat/open/read failed: the `strerror` text (`no such file or directory`).
    case unreadable(String)
    /// A FIFO, a directory, a device…: never opened (or opened non-blocking and closed at once).
    case notRegular(String)
    case tooLarge(maximum: Int)
    case nulByte(offset: Int, line: Int)
    case notUTF8

    /// The problem in words; `what` names the file's kind (`the mapping file`), `allowedText`
    /// what it must be (`a UTF-8 TOML or JSON file`).
    package func problem(what: String = "it", allowedText: String = "a UTF-8 text file") -> String {
        switch self {
        case .unreadable(let reason): "cannot read \(what): \(reason)"
        case .notRegular(let kind): "\(kind), not a regular file; allowed: a regular file"
        case .tooLarge(let maximum): "file is larger than \(maximum / 1024) KiB; allowed: at most \(maximum / 1024) KiB"
        case .nulByte(let offset, let line): "a NUL byte at offset \(offset) (line \(line)); allowed: text without NUL bytes"
        case .notUTF8: "not UTF-8 text; allowed: \(allowedText)"
        }
    }
}
