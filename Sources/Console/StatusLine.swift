#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The live one-line status of a long-running command, redrawn in place on stderr.
///
/// It draws only when stderr is a terminal and `--quiet` is off; otherwise every call is a
/// no-op, so piping a command's output never fills a log with carriage returns. Log lines go
/// through ``printAbove(_:)`` so they never interleave with a half-drawn status.
package final class StatusLine: Sendable {
    package let enabled: Bool
    private let state = Mutex<(text: String, lastDraw: ContinuousClock.Instant?)>(("", nil))
    /// The shortest interval between redraws (a terminal is not a 1 kHz display).
    package let minimumInterval: Duration

    package init(quiet: Bool, minimumInterval: Duration = .milliseconds(100)) {
        enabled = !quiet && isatty(STDERR_FILENO) == 1
        self.minimumInterval = minimumInterval
    }

    /// Replaces the status text; drawn now unless the last draw was under ``minimumInterval`` ago
    /// (pass `force` for changes a person must see at once, like "FAILSAFE").
    package func update(_ text: String, force: Bool = false) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let draw: String? = state.withLock { s in
            s.text = text
            if !force, let last = s.lastDraw, now - last < minimumInterval { return nil }
            s.lastDraw = now
            return text
        }
        if let draw { write("\r\u{1B}[K" + Self.fit(draw)) }
    }

    /// Prints a whole line above the status line, then redraws the status.
    package func printAbove(_ line: String) {
        if enabled {
            let text = state.withLock { $0.text }
            write("\r\u{1B}[K" + line + "\n" + Self.fit(text))
        } else {
            write(line + "\n")
        }
    }

    /// Erases the status line (call before exiting).
    package func clear() {
        guard enabled else { return }
        write("\r\u{1B}[K")
    }

    static func fit(_ text: String) -> String {
        var size = winsize()
        let columns = ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 100
        return fit(text, columns: columns)
    }

    /// Cuts `text` to fewer than `columns` visible characters. ANSI colour sequences (`ESC [ … m`)
    /// take no column and are never cut in half; a cut line ends with a colour reset.
    package static func fit(_ text: String, columns: Int) -> String {
        var out = ""
        var visible = 0
        var escape = false
        var cut = false
        for ch in text {
            if escape {
                out.append(ch)
                if ch == "m" { escape = false }
                continue
            }
            if ch == "\u{1B}" { escape = true; out.append(ch); continue }
            if visible >= columns - 1 { cut = true; continue }
            out.append(ch)
            visible += 1
        }
        return cut && text.contains("\u{1B}") ? out + "\u{1B}[0m" : out
    }

    private func write(_ text: String) { StandardError.write(text) }
}

/// Unbuffered writes to stderr (fd 2), safe from any thread.
package enum StandardError {
    package static func write(_ text: String) { writeAll(text, to: STDERR_FILENO) }
}

/// Unbuffered writes to stdout (fd 1): a script reading our output through a pipe sees each
/// line (`receiving on udp port N`, board-sim's path and trace) as soon as it is written —
/// `print` would hold it in a buffer while stdout is a pipe.
package enum StandardOutput {
    package static func write(_ text: String) { writeAll(text, to: STDOUT_FILENO) }
}

/// Writes all of `text`, retrying on EINTR; gives up silently on a closed pipe (SIGPIPE is
/// ignored by our commands, so the write just fails).
func writeAll(_ text: String, to fd: Int32) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
        offset += n
    }
}

extension StatusLine {
    /// A bar for a value in -1...1, e.g. `[----|##  ]` for 0.4 (centre marked with `|`).
    package static func bar(_ value: Double, width: Int = 21) -> String {
        let half = width / 2
        let clamped = max(-1, min(1, value.isFinite ? value : 0))
        let filled = Int((clamped * Double(half)).rounded())
        var cells = [Character](repeating: " ", count: width)
        cells[half] = "|"
        if filled > 0 { for i in 1...filled { cells[half + i] = "#" } }
        if filled < 0 { for i in 1...(-filled) { cells[half - i] = "#" } }
        return "[" + String(cells) + "]"
    }
}
