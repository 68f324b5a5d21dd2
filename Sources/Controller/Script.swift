import ConfigFile
import RemoteWire

/// A timed list of states for demos and repeatable tests: one `T_MS ANGLE BUTTONS` per line.
///
/// T_MS is whole milliseconds since the controller started, never smaller than the previous
/// line's; ANGLE and BUTTONS are as in ``StateLine``. Blank lines and `#` comments are skipped.
/// The script ends at its last line: that state is sent, then the neutral state three times.
/// A script that should hold its last state for a while ends with a neutral line later on.
package struct Script: Equatable, Sendable {
    package struct Step: Equatable, Sendable {
        /// When to apply the state, from the start.
        package let at: Duration
        package let state: ControllerState
        /// The line in the file, for messages.
        package let line: Int
    }

    /// Why a script is refused: the file, the line (0 = the whole file) and what is wrong.
    package struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        package let file: String
        package let line: Int
        package let reason: String
        package var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
    }

    package let steps: [Step]

    /// The largest script file read (a script is a few hundred lines; this catches a wrong path
    /// such as a device or a log file).
    package static let maximumSize = 1 << 20

    package static func parse(_ text: String, file: String) throws(Problem) -> Script {
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

    /// Reads and parses `path` (a regular UTF-8 file without NUL bytes, at most ``maximumSize``:
    /// ``ConfigFileReader``'s rules, so a FIFO cannot hang the controller); any failure is a
    /// ``Problem`` naming the file.
    package static func load(path: String) throws(Problem) -> Script {
        let text: String
        do {
            text = try ConfigFileReader.read(path, maximumSize: maximumSize)
        } catch {
            throw Problem(file: path, line: 0, reason: error.problem(what: "the script", allowedText: "a UTF-8 script (T_MS ANGLE BUTTONS per line)"))
        }
        return try parse(text, file: path)
    }
}
