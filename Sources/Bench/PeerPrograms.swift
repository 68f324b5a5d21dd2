#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import SystemIO

/// What a user could run instead of ours, kept in `benchmarks/peers/` of the checkout: the C
/// reference pair (compiled here with the system's C compiler into a temporary directory) and the
/// Python bridge. A part that cannot run says why in ``cSkipped`` / ``pythonSkipped``.
struct PeerPrograms {
    /// `benchmarks/peers` of the checkout, nil when not found.
    let directory: String?
    var cController: String?
    var cReceiver: String?
    var python: String?
    var cSkipped: String?
    var pythonSkipped: String?
    /// Holds the compiled C pair; removed by ``remove()``.
    private var temporary: String?

    static let sources = ["controller.c", "receiver.c", "bridge.py"]

    /// Finds the peers (``locate()``), compiles the C pair (unless `compileC` is false), finds `python3`.
    static func prepare(directory: String? = locate(), compileC: Bool = true) -> PeerPrograms {
        var programs = PeerPrograms(directory: directory)
        guard let directory else {
            let why = "skipped: benchmarks/peers/ not found (run the bench from the checkout)"
            programs.cSkipped = why
            programs.pythonSkipped = why
            return programs
        }
        if let python = which("python3") {
            programs.python = python
        } else {
            programs.pythonSkipped = "skipped: no python3 on PATH"
        }
        guard compileC else {
            programs.cSkipped = "skipped: not asked to compile"
            return programs
        }
        guard let compiler = ["cc", "gcc", "clang"].lazy.compactMap(which).first else {
            programs.cSkipped = "skipped: no C compiler (cc, gcc or clang on PATH)"
            return programs
        }
        var template = Array("/tmp/analog-remote-peers-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            programs.cSkipped = "skipped: cannot make a temporary directory: \(String(cString: strerror(errno)))"
            return programs
        }
        let temporary = String(cString: made)
        programs.temporary = temporary
        for name in ["controller", "receiver"] {
            let output = "\(temporary)/peer-\(name)"
            if let failure = compile(compiler, source: "\(directory)/\(name).c", output: output) {
                programs.cSkipped = "skipped: \(failure)"
                return programs
            }
            if name == "controller" { programs.cController = output } else { programs.cReceiver = output }
        }
        return programs
    }

    /// `benchmarks/peers` in the working directory or above it, or above this executable
    /// (`.build/release/analog-remote` of a checkout).
    static func locate() -> String? {
        var starts = [FileManager.default.currentDirectoryPath]
        if let executable = try? Child.ownExecutable() { starts.append(URL(fileURLWithPath: executable).deletingLastPathComponent().path) }
        for start in starts {
            var dir = URL(fileURLWithPath: start)
            for _ in 0..<6 {
                let candidate = dir.appendingPathComponent("benchmarks/peers")
                if sources.allSatisfy({ FileManager.default.fileExists(atPath: candidate.appendingPathComponent($0).path) }) {
                    return candidate.path
                }
                dir.deleteLastPathComponent()
            }
        }
        return nil
    }

    /// Nil when it compiled; otherwise the reason, one line.
    private static func compile(_ compiler: String, source: String, output: String) -> String? {
        let process: Child
        do {
            process = try Child(executable: compiler, arguments: ["-O2", "-o", output, source, "-lm"], label: "cc")
        } catch {
            return "cannot start \(compiler): \(error.reason)"
        }
        if !process.wait(timeout: .seconds(120)) {
            process.stop(grace: .seconds(1))
            return "\(compiler) took over 2 minutes on \(source)"
        }
        guard process.exitStatus == 0 else {
            let said = process.stderr.split(separator: "\n").first.map(String.init) ?? "status \(process.exitStatus ?? -1)"
            return "\(compiler) failed on \(source): \(said)"
        }
        return nil
    }

    static func which(_ name: String) -> String? {
        try? Child.which(name)
    }

    var bridge: String? { directory.map { "\($0)/bridge.py" } }

    /// Removes the compiled C pair.
    func remove() {
        guard let temporary else { return }
        try? FileManager.default.removeItem(atPath: temporary)
    }
}
