#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A text file written a line at a time (a recording, a black box): each line goes out in one
/// `write(2)`, so a process that dies mid-drive leaves every line it finished on disk, and at
/// worst the one it was writing cut short.
package final class LineFile {
    package let path: String
    private let file: Descriptor

    /// Creates (or empties) `path`, mode 0644.
    package init(creating path: String) throws(SystemError) {
        self.path = path
        let fd = try Syscall.call("open", subject: path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        file = Descriptor(adopting: fd, label: path)
    }

    /// Appends `line` and a newline.
    package func append(_ line: String) throws(SystemError) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        try file.writeAll(bytes)
    }

    /// Appends text that already ends in newlines (many lines in one write).
    package func appendRaw(_ text: String) throws(SystemError) {
        try file.writeAll(Array(text.utf8))
    }

    package func close() { file.close() }

    /// Writes `text` to `path` as a whole: into a hidden temporary beside it, then renamed over
    /// it, so a reader never sees half a file.
    package static func replace(_ path: String, with text: String) throws(SystemError) {
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(dir)/.\(name).\(getpid()).tmp"
        let file = try LineFile(creating: temporary)
        do {
            try file.appendRaw(text)
            file.close()
            try Syscall.call("rename", subject: path) { rename(temporary, path) }
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
    }
}

/// The plain files of a directory, for rotation.
package enum DirectoryListing {
    package struct File: Equatable, Sendable {
        package var name: String
        package var size: Int
        /// Modification time, seconds since 1970.
        package var modified: Int
    }

    /// The regular files in `directory` whose names start with `prefix` and end with `suffix`.
    package static func files(in directory: String, prefix: String, suffix: String) -> [File] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var out: [File] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { continue }
            var info = stat()
            guard stat("\(directory)/\(name)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            out.append(File(name: name, size: Int(info.st_size), modified: Int(info.st_mtim.tv_sec)))
        }
        return out
    }

    /// Removes `directory/name`; false when it could not.
    @discardableResult
    package static func remove(_ name: String, in directory: String) -> Bool {
        unlink("\(directory)/\(name)") == 0
    }

    /// Creates `directory` (one level) when it does not exist yet.
    package static func ensure(_ directory: String) throws(SystemError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw SystemError(call: "mkdir", errno: ENOTDIR, subject: directory) }
            return
        }
        try Syscall.call("mkdir", subject: directory) { mkdir(directory, 0o755) }
    }
}
