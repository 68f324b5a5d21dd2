#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one way this project writes files: into a directory opened once and checked, by name
/// relative to that open directory, never through a link.
///
/// - The directory is opened with `O_DIRECTORY|O_NOFOLLOW` (a link given as the directory is
///   refused) and checked on the open descriptor with `fstat` (see ``problem(_:path:euid:)``);
///   every later call (`openat`, `renameat`, `linkat`, `unlinkat`, `fstatat`) goes through that
///   descriptor, so the directory cannot be swapped under us after the check.
/// - Files are created with `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, mode 0600 unless the caller
///   documents another: a name planted beforehand (a link, a file) is never followed or
///   truncated.
/// - A whole file replaced at once (``replace(_:with:mode:)``) is written under an unpredictable
///   hidden name (`.NAME.<16 random hex digits>.tmp`), then `renameat` over the name.
///
/// The directory rule: it must be a directory owned by this user or root, and not writable by
/// group or others unless its sticky bit is set (like /tmp: others may then add names but never
/// remove or rename ours, and a name they plant is refused, not followed). Only the directory
/// itself is checked, not its parents.
package final class SafeDirectory: Sendable {
    package let path: String
    private let directory: Descriptor

    /// Opens `path`, first creating it (mode `mode`, and missing parents 0755) when `create` is
    /// set and it is not there. Throws one line naming the directory and the fix.
    package init(_ path: String, create: Bool = true, mode: mode_t = 0o700) throws(SafeFileError) {
        let path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : (path.isEmpty ? "." : path)
        self.path = path
        if create, mkdir(path, mode) != 0, errno != EEXIST {
            if errno != ENOENT || !Self.makeParents(path, mode: mode) {
                throw SafeFileError("\(path): cannot create it: \(Self.reason(errno))")
            }
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            var link = stat()
            if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
                throw SafeFileError("\(path) is a symbolic link: give the directory itself (readlink -f \(path))")
            }
            throw SafeFileError("\(path): cannot open it: \(Self.reason(code))")
        }
        directory = Descriptor(adopting: fd, label: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SafeFileError("\(path): cannot stat it: \(Self.reason(errno))") }
        if let problem = Self.problem(info, path: path, euid: geteuid()) { throw SafeFileError(problem) }
    }

    /// Why a directory with these `fstat` facts may not be written in (one line ending in the
    /// fix), or nil when it may.
    package static func problem(_ info: stat, path: String, euid: uid_t) -> String? {
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(path) is not a directory" }
        guard info.st_uid == euid || info.st_uid == 0 else {
            return "\(path) belongs to another user (uid \(info.st_uid)): use a directory of your own (or chown \(euid) \(path))"
        }
        let mode = info.st_mode & 0o7777
        if mode & 0o022 != 0, mode & S_ISVTX == 0 {
            return "\(path) may be written by other users (mode 0\(String(mode, radix: 8))): run chmod go-w \(path), or use a directory of your own"
        }
        return nil
    }

    /// Creates `name` (one path component) as a new file open for writing, mode `mode`. An
    /// existing name (a file, a planted link) is an error (`EEXIST`), never followed.
    package func create(_ name: String, mode: mode_t = 0o600) throws(SafeFileError) -> Descriptor {
        try checkName(name)
        let raw = directory.rawValue
        let fd = openat(raw, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SafeFileError("\(path)/\(name): cannot create it: \(Self.reason(errno))", errno: errno) }
        _ = fchmod(fd, mode)   // the umask may have taken bits the caller documented
        return Descriptor(adopting: fd, label: "\(path)/\(name)")
    }

    /// Like ``create(_:mode:)``, but an existing regular file of ours by that name is removed
    /// first (`control --record FILE` run twice). Anything else there — a link, a directory,
    /// another user's file — is refused and left alone.
    package func createReplacing(_ name: String, mode: mode_t = 0o600) throws(SafeFileError) -> Descriptor {
        try checkName(name)
        var info = stat()
        if fstatat(directory.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFLNK: throw SafeFileError("\(path)/\(name) is a symbolic link: give a new file name (links are never followed)", errno: EEXIST)
            case S_IFREG where info.st_uid == geteuid(): _ = unlinkat(directory.rawValue, name, 0)
            default: throw SafeFileError("\(path)/\(name) exists and is not a file of ours: give a new file name", errno: EEXIST)
            }
        }
        return try create(name, mode: mode)
    }

    /// Creates a new file named `stem` + `suffix`, or, when that name is taken (a planted name,
    /// a second drive in the same millisecond), `stem-2` + `suffix`, `stem-3`…; returns the
    /// name used and the open file.
    package func createUnique(stem: String, suffix: String, mode: mode_t = 0o600) throws(SafeFileError) -> (name: String, file: Descriptor) {
        var lastError = SafeFileError("\(path)/\(stem)\(suffix): cannot create it")
        for attempt in 1...16 {
            let name = attempt == 1 ? stem + suffix : "\(stem)-\(attempt)\(suffix)"
            do {
                return (name, try create(name, mode: mode))
            } catch {
                guard error.errno == EEXIST else { throw error }
                lastError = error
            }
        }
        throw lastError
    }

    /// Writes `bytes` as the whole of `name`: into an unpredictable hidden temporary created
    /// new, synced, then renamed over `name` within this directory, so a reader sees the old
    /// file or the new one, never half, and a link at `name` is replaced, not followed.
    package func replace(_ name: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(SafeFileError) {
        let (temporary, file) = try createTemporary(for: name, mode: mode)
        do throws(SafeFileError) {
            try write(bytes, to: file, name: name)
            file.close()
            guard renameat(directory.rawValue, temporary, directory.rawValue, name) == 0 else {
                throw SafeFileError("\(path)/\(name): cannot rename it into place: \(Self.reason(errno))", errno: errno)
            }
        } catch {
            file.close()
            _ = unlinkat(directory.rawValue, temporary, 0)
            throw error
        }
    }

    /// Writes `bytes` as `name` only when `name` does not exist yet (a key, a certificate, a
    /// robot id): written aside, then hard-linked into place, so the file appears whole and,
    /// of two processes at once, the first one linked wins. True when this call made it.
    @discardableResult
    package func createOnce(_ name: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(SafeFileError) -> Bool {
        let (temporary, file) = try createTemporary(for: name, mode: mode)
        defer { _ = unlinkat(directory.rawValue, temporary, 0) }
        do throws(SafeFileError) {
            try write(bytes, to: file, name: name)
        } catch {
            file.close()
            throw error
        }
        file.close()
        if linkat(directory.rawValue, temporary, directory.rawValue, name, 0) == 0 { return true }
        guard errno == EEXIST else { throw SafeFileError("\(path)/\(name): cannot create it: \(Self.reason(errno))", errno: errno) }
        return false
    }

    /// The bytes of `name`, at most `limit`; a link or anything but a regular file is refused.
    package func read(_ name: String, limit: Int) throws(SafeFileError) -> [UInt8] {
        try checkName(name)
        let fd = openat(directory.rawValue, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw SafeFileError("\(path)/\(name): cannot read it: \(Self.reason(errno))", errno: errno) }
        let file = Descriptor(adopting: fd, label: "\(path)/\(name)")
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw SafeFileError("\(path)/\(name) is not a regular file")
        }
        var out: [UInt8] = []
        do {
            while let chunk = try file.read(max: 65536), !chunk.isEmpty {
                out += chunk
                guard out.count <= limit else { throw SafeFileError("\(path)/\(name) is larger than \(limit) bytes") }
            }
        } catch let error as SafeFileError {
            throw error
        } catch {
            throw SafeFileError("\(path)/\(name): cannot read it: \(error)")
        }
        return out
    }

    /// The regular files of this directory owned by this user whose names start with `prefix`
    /// and end with `suffix` (links and other users' files are never listed, so never rotated).
    package func files(prefix: String, suffix: String) -> [DirectoryListing.File] {
        let copy = dup(directory.rawValue)
        guard copy >= 0 else { return [] }
        guard let dir = fdopendir(copy) else { close(copy); return [] }
        defer { closedir(dir) }
        rewinddir(dir)
        var out: [DirectoryListing.File] = []
        let me = geteuid()
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { continue }
            var info = stat()
            guard fstatat(directory.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                  info.st_mode & S_IFMT == S_IFREG, info.st_uid == me else { continue }
            out.append(DirectoryListing.File(name: name, size: Int(info.st_size), modified: Int(info.st_mtim.tv_sec)))
        }
        return out
    }

    /// Removes `name` (the link itself if it is one); false when it could not.
    @discardableResult
    package func remove(_ name: String) -> Bool {
        guard !name.contains("/") else { return false }
        return unlinkat(directory.rawValue, name, 0) == 0
    }

    /// Removes the oldest of ``files(prefix:suffix:)`` until together they take at most
    /// `maximumBytes`, never `keeping` (the file being written). Returns the names removed.
    @discardableResult
    package func rotate(prefix: String, suffix: String, maximumBytes: Int, keeping: Set<String> = []) -> [String] {
        var files = self.files(prefix: prefix, suffix: suffix).sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
        var total = files.reduce(0) { $0 + $1.size }
        var removed: [String] = []
        while total > maximumBytes, let index = files.firstIndex(where: { !keeping.contains($0.name) }) {
            let oldest = files.remove(at: index)
            if remove(oldest.name) {
                total -= oldest.size
                removed.append(oldest.name)
            }
        }
        return removed
    }

    /// Splits `path` into its directory and last component (`.` for a bare name).
    package static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }

    /// `.NAME.<16 random hex digits>.tmp`: a hidden temporary nobody can name ahead.
    package static func temporaryName(for name: String) -> String {
        ".\(name.prefix(200)).\(randomTag()).tmp"
    }

    /// 16 hex digits from the system's random source.
    static func randomTag() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = String(g.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private func createTemporary(for name: String, mode: mode_t) throws(SafeFileError) -> (String, Descriptor) {
        try checkName(name)
        var last: SafeFileError?
        for _ in 0..<8 {
            let temporary = Self.temporaryName(for: name)
            do {
                return (temporary, try create(temporary, mode: mode))
            } catch {
                guard error.errno == EEXIST else { throw error }
                last = error
            }
        }
        throw last ?? SafeFileError("\(path)/\(name): cannot create a temporary beside it")
    }

    private func write(_ bytes: [UInt8], to file: Descriptor, name: String) throws(SafeFileError) {
        do {
            try file.writeAll(bytes)
        } catch {
            throw SafeFileError("\(path)/\(name): cannot write it: \(error.reason)", errno: error.errno)
        }
        guard fsync(file.rawValue) == 0 else { throw SafeFileError("\(path)/\(name): cannot write it: \(Self.reason(errno))", errno: errno) }
    }

    private func checkName(_ name: String) throws(SafeFileError) {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.utf8.contains(0) else {
            throw SafeFileError("\(path): \"\(name)\" is not a file name")
        }
    }

    /// `mkdir -p` for the parents (0755) and `path` itself (`mode`); false (errno set) on failure.
    private static func makeParents(_ path: String, mode: mode_t) -> Bool {
        var prefix = path.hasPrefix("/") ? "" : "."
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        for (i, part) in parts.enumerated() {
            prefix += "/" + part
            if mkdir(prefix, i == parts.count - 1 ? mode : 0o755) != 0, errno != EEXIST { return false }
        }
        return true
    }

    static func reason(_ code: Int32) -> String { SystemError(call: "", errno: code).reason }
}

/// A file or directory this project will not write: one line naming it and saying what to do.
package struct SafeFileError: Error, CustomStringConvertible, Sendable {
    package let description: String
    /// The errno behind it, when a call failed (EEXIST for a name already taken); 0 otherwise.
    package let errno: Int32

    package init(_ description: String, errno: Int32 = 0) {
        self.description = description
        self.errno = errno
    }
}
