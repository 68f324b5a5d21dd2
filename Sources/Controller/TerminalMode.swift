#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// The keyboard UI's terminal settings: raw input while it runs, the saved settings back on
/// every way out (``restore()``, and ``FatalSignalGuard`` for fatal signals).
///
/// Raw here means: no line buffering (ICANON), no echo, no signals from keys (ISIG: Ctrl-C
/// arrives as a byte and the UI quits cleanly), no flow control or CR/NL translation on input.
/// Output processing (OPOST) stays on, so status lines and log lines keep their newlines.
///
/// On entry it asks the terminal for the kitty keyboard protocol (``enterSequence``): push flags
/// 11 = disambiguate (1) + report event types, i.e. repeat and release (2) + report all keys as
/// escape codes (8) — plain letters need 8 to get release events — then query the flags in force
/// (`CSI ? u`; only a terminal that supports the protocol answers), and turn on focus reports
/// (`CSI ? 1004 h`). Terminals without these ignore them. ``resetSequence`` undoes both.
final class TerminalMode {
    static let enterSequence = "\u{1B}[>11u\u{1B}[?u\u{1B}[?1004h"
    /// Focus reports off, pop the kitty flags we pushed.
    static let resetSequence: StaticString = "\u{1B}[?1004l\u{1B}[<u"

    let fd: Int32
    let output: Int32
    let saved: termios
    private var restored = false

    /// Switches `fd` (a terminal) to raw input; escape sequences go to `output` (the same terminal).
    init(fd: Int32, output: Int32) throws(SystemError) {
        self.fd = fd
        self.output = output
        var settings = termios()
        try Syscall.call("tcgetattr", subject: "keyboard") { tcgetattr(fd, &settings) }
        saved = settings
        FatalSignalGuard.armTerminal(fd: fd, settings: settings)
        var raw = settings
        Self.makeRaw(&raw)
        do {
            try Syscall.call("tcsetattr", subject: "keyboard") { tcsetattr(fd, TCSANOW, &raw) }
        } catch {
            FatalSignalGuard.disarmTerminal()
            throw error
        }
        write(Self.enterSequence)
    }

    deinit { restore() }

    static func makeRaw(_ t: inout termios) {
        t.c_lflag &= ~tcflag_t(ICANON | ECHO | ECHONL | ISIG | IEXTEN)
        t.c_iflag &= ~tcflag_t(IXON | IXOFF | ICRNL | INLCR | IGNCR | BRKINT | ISTRIP | INPCK | PARMRK)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
    }

    /// Resets the terminal and puts the saved settings back; drops unread input (key repeats
    /// that would otherwise land in the shell). Never blocks on output; safe to call twice.
    func restore() {
        guard !restored else { return }
        restored = true
        Self.resetSequence.withUTF8Buffer { b in _ = Glibc.write(output, b.baseAddress, b.count) }
        var settings = saved
        _ = tcsetattr(fd, TCSANOW, &settings)
        _ = tcflush(fd, TCIFLUSH)
        FatalSignalGuard.disarmTerminal()
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        let output = output
        _ = try? Syscall.call("write", subject: "keyboard") {
            bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
        }
    }
}
