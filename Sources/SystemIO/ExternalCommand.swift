#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Another executable of this project run in place of this process, as git runs its external
/// subcommands: `analog-remote web …` is `analog-remote-web …`, looked for beside the running
/// executable first (a build folder, /usr/bin of a package), then on PATH.
package enum ExternalCommand {
    /// The path of the running executable (`/proc/self/exe`), nil when the kernel will not say.
    package static func ownExecutable() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { readlink("/proc/self/exe", $0, b.count - 1) }
        }
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n), as: UTF8.self)
    }

    /// The first executable file called `name` beside `ownExecutable`, else in a directory of
    /// `path` (PATH's form; empty entries are skipped, not the current directory).
    package static func find(_ name: String, beside ownExecutable: String?, path: String?) -> String? {
        var directories: [Substring] = []
        if let own = ownExecutable, let slash = own.lastIndex(of: "/") { directories.append(own[..<slash]) }
        directories += (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: true)
        for directory in directories where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Replaces this process with `path`, `arguments` after its name (argv[0] is `path`'s last
    /// component). Returns only by throwing: the program could not be run.
    package static func replaceProcess(with path: String, arguments: [String]) throws(SystemError) -> Never {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var argv: [UnsafeMutablePointer<CChar>?] = ([name] + arguments).map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        _ = execv(path, argv)
        throw SystemError(call: "execv", errno: errno, subject: path)
    }
}
