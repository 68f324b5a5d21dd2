#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Controller
import DriveRecord
import Receiver
import SystemIO

/// `analog-remote plot FILE -o OUT`: reads a recording (a drive or a black box), draws it
/// (``PlotModel``, ``PlotSVG``) and writes OUT. `.svg` is written directly; `.png` goes through
/// `rsvg-convert` (Debian package librsvg2-bin) when it is installed.
package enum PlotCommand {
    /// The converter for PNG output, looked up on PATH.
    package static let converter = "rsvg-convert"

    /// Returns the lines to print (a cut-short recording's warning, what was written).
    package static func run(input: String, output: String, mapping: Mapping) throws(CommandFailure) -> [String] {
        let recording = try RecordingFile.load(path: input, verb: "plot")
        var lines: [String] = []
        if let warning = recording.truncationWarning(file: input) { lines.append("plot \(warning)") }
        let name = input.split(separator: "/").last.map(String.init) ?? input
        let svg = PlotSVG.render(PlotModel(recording, mapping: mapping), title: name)
        let lower = output.lowercased()
        if lower.hasSuffix(".png") {
            guard let tool = Self.find(converter) else {
                throw CommandFailure("plot: -o \(output) needs \(converter) for PNG (Debian: sudo apt-get install librsvg2-bin), or write -o FILE.svg",
                                      kind: .badConfiguration)
            }
            // The converter works in a private directory of its own (mkdtemp, mode 0700): it
            // writes by path and would follow a link planted beside OUT. Its PNG is then written
            // to OUT the safe way.
            var template = Array("\(Self.temporaryRoot)/analog-remote-plot-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else {
                throw CommandFailure("plot: cannot make a temporary directory in \(Self.temporaryRoot) (errno \(errno))", kind: .failed)
            }
            let work = String(cString: made)
            defer {
                unlink(work + "/plot.svg")
                unlink(work + "/plot.png")
                rmdir(work)
            }
            try write(svg, to: work + "/plot.svg")
            let process: SpawnedProcess
            do {
                process = try SpawnedProcess(executable: tool, arguments: ["--zoom", "1.5", "--background-color", "white", "-o", work + "/plot.png", work + "/plot.svg"],
                                             label: converter)
            } catch {
                throw CommandFailure("plot: cannot run \(tool): \(error.reason)", kind: .failed)
            }
            guard process.wait(timeout: .seconds(60)) else {
                process.stop(grace: .milliseconds(200))
                throw CommandFailure("plot: \(converter) did not finish within 60 s", kind: .failed)
            }
            guard process.exitStatus == 0 else {
                throw CommandFailure("plot: \(converter) failed (status \(process.exitStatus ?? -1)): \(process.stderr.split(separator: "\n").first ?? "")",
                                      kind: .failed)
            }
            do throws(SafeFileError) {
                let png = try SafeDirectory(work, create: false).read("plot.png", limit: 1 << 30)
                let (directory, name) = SafeDirectory.split(output)
                try SafeDirectory(directory, create: false).replace(name, with: png, mode: 0o644)
            } catch {
                throw CommandFailure("plot: cannot write: \(error)", kind: .failed)
            }
        } else if lower.hasSuffix(".svg") {
            try write(svg, to: output)
        } else {
            throw CommandFailure("plot: -o \(output): give a name ending in .svg or .png", kind: .badConfiguration)
        }
        lines.append("plot: wrote \(output) (\(recording.entries.count) entries, \(RecordNumber.plain(recording.duration, places: 1)) s)")
        return lines
    }

    static func write(_ text: String, to path: String) throws(CommandFailure) {
        do {
            try LineFile.replace(path, with: text, mode: 0o644)
        } catch {
            throw CommandFailure("plot: cannot write: \(error)", kind: .failed)
        }
    }

    /// `$TMPDIR` when it is an absolute path, else /tmp.
    static var temporaryRoot: String {
        guard let t = getenv("TMPDIR").map({ String(cString: $0) }), t.hasPrefix("/") else { return "/tmp" }
        return t.count > 1 && t.hasSuffix("/") ? String(t.dropLast()) : t
    }

    /// `name`'s path on PATH, or nil.
    package static func find(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
