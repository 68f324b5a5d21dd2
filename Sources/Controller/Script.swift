#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RemoteWire
import SystemIO

/// A timed list of states for demos and repeatable tests: one `T_MS ANGLE BUTTONS` per line.
///
/// T_MS is whole milliseconds since the controller started, never smaller than the previous
/// line's; ANGLE and BUTTONS are as in ``StateLine``. Blank lines and `#` comments are skipped.
/// The script ends at its last line: that state is sent, then the neutral state three times.
/// A script that should hold its last state for a while ends with a neutral line later on.
public struct Script: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        /// When to apply the state, from the start.
        public let at: Duration
        public let state: ControllerState
        /// The line in the file, for messages.
        public let line: Int
    }

    /// Why a script is refused: the file, the line (0 = the whole file) and what is wrong.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public let file: String
        public let line: Int
        public let reason: String
        public var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
    }

    public let steps: [Step]

    /// The largest script file read (a script is a few hundred lines; this catches a wrong path
    /// such as a device or a log file).
    public static let maximumSize = 1 << 20

    public static func parse(_ text: String, file: String) throws(Problem) -> Script {
        var steps: [Step] = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let f = StateLine.fields(line)
            if f.isEmpty { continue }
            guard f.count == 2 || f.count == 3 else {
                throw Problem(file: file, line: number,
                              reason: "expected T_MS ANGLE BUTTONS (e.g. `1500 0.3 forward`), found \(f.count) fields")
            }
            guard let ms = Int64(f[0]), ms >= 0 else {
                throw Problem(file: file, line: number,
                              reason: "bad time `\(f[0])` (whole milliseconds since the start, e.g. 1500)")
            }
            let state: ControllerState
            do {
                state = try StateLine.state(angle: f[1], buttons: f.count > 2 ? f[2] : nil)
            } catch {
                throw Problem(file: file, line: number, reason: error.description)
            }
            let at = Duration.milliseconds(ms)
            if let previous = steps.last, at < previous.at {
                throw Problem(file: file, line: number,
                              reason: "time \(ms) ms is before line \(previous.line)'s (times must not decrease)")
            }
            steps.append(Step(at: at, state: state, line: number))
        }
        guard !steps.isEmpty else {
            throw Problem(file: file, line: 0, reason: "no timed lines (expected T_MS ANGLE BUTTONS per line)")
        }
        return Script(steps: steps)
    }

    /// Reads and parses `path`; any failure is a ``Problem`` naming the file.
    public static func load(path: String) throws(Problem) -> Script {
        let bytes: [UInt8]
        do {
            bytes = try readFile(path)
        } catch {
            throw Problem(file: path, line: 0, reason: error.reason)
        }
        guard bytes.count <= maximumSize else {
            throw Problem(file: path, line: 0, reason: "larger than \(maximumSize / 1024) KiB: is this a script?")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Problem(file: path, line: 0, reason: "not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    static func readFile(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = try Syscall.call("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        let file = Descriptor(adopting: fd, label: path)
        var out: [UInt8] = []
        while out.count <= maximumSize {
            guard let chunk = try file.read(max: 65536) else { continue }
            if chunk.isEmpty { break }
            out += chunk
        }
        return out
    }
}
