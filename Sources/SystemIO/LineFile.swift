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

    /// Creates `path` new, mode `mode` (``SafeDirectory``: its directory checked, never through
    /// a link). An existing regular file of ours by that name is replaced; a link or anyone
    /// else's file there is refused.
    package init(creating path: String, mode: mode_t = 0o600) throws(SafeFileError) {
        self.path = path
        let (directory, name) = SafeDirectory.split(path)
        file = try SafeDirectory(directory, create: false).createReplacing(name, mode: mode)
    }

    /// A file already created in a ``SafeDirectory`` (``SafeDirectory/createUnique(stem:suffix:mode:)``).
    package init(_ file: Descriptor, path: String) {
        self.path = path
        self.file = file
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

    /// Writes `text` to `path` as a whole (``SafeDirectory/replace(_:with:mode:)``): into an
    /// unpredictable hidden temporary beside it, then renamed over it, so a reader never sees
    /// half a file and a link at `path` is replaced, not followed.
    package static func replace(_ path: String, with text: String, mode: mode_t = 0o600) throws(SafeFileError) {
        let (directory, name) = SafeDirectory.split(path)
        try SafeDirectory(directory, create: false).replace(name, with: Array(text.utf8), mode: mode)
    }
}

/// The plain files of a directory, for rotation (``SafeDirectory/files(prefix:suffix:)``).
package enum DirectoryListing {
    package struct File: Equatable, Sendable {
        package var name: String
        package var size: Int
        /// Modification time, seconds since 1970.
        package var modified: Int
    }
}
