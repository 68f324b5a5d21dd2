#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a command keeps what must outlive a restart (the receiver's robot id, the web server's
/// certificate), and the one way to keep a small file there.
package enum StateDirectory {
    /// systemd's `$STATE_DIRECTORY` (the unit's `StateDirectory=`; the first of a colon-separated
    /// list), else `$XDG_STATE_HOME/analog-remote`, else `~/.local/state/analog-remote`. Relative
    /// values are ignored, as the XDG specification asks. Not created here.
    package static func path(environment: [String: String]) -> String {
        if let systemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first, systemd.hasPrefix("/") {
            return String(systemd)
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/analog-remote" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/root"
        return home + "/.local/state/analog-remote"
    }

    /// The process environment, for ``path(environment:)``.
    package static var processEnvironment: [String: String] {
        var out: [String: String] = [:]
        for key in ["STATE_DIRECTORY", "XDG_STATE_HOME", "HOME"] {
            if let value = getenv(key) { out[key] = String(cString: value) }
        }
        return out
    }

    /// The bytes of `name` in `directory`; when it is not there yet, `make()`'s bytes are written
    /// to it first (mode 0644; the directory is made with mode 0755 when missing, and checked:
    /// ``SafeDirectory``). Two processes starting at once agree: the file appears whole (written
    /// aside, then linked into place) and the first one linked wins. A link is never followed.
    /// Throws one line naming the directory and what failed.
    package static func keep(_ name: String, in directory: String, make: () -> [UInt8]) throws(StateDirectoryError) -> [UInt8] {
        do throws(SafeFileError) {
            let dir = try SafeDirectory(directory, mode: 0o755)
            if let bytes = try? dir.read(name, limit: 4096) { return bytes }
            try dir.createOnce(name, with: make(), mode: 0o644)
            return try dir.read(name, limit: 4096)
        } catch {
            throw StateDirectoryError(directory: directory, problem: error.description)
        }
    }
}

/// A state directory that cannot be used: which one, and what failed.
package struct StateDirectoryError: Error, CustomStringConvertible, Sendable {
    package let directory: String
    package let problem: String
    package var description: String { problem.hasPrefix(directory) ? problem : "\(directory): \(problem)" }
}
