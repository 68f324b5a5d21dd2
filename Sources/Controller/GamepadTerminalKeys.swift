#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// The few keys a gamepad controller takes from its terminal, when stdin is one: `q`, Ctrl-C,
/// Ctrl-D, Ctrl-\ quit and Ctrl-Z suspends — as in the keyboard UI (the terminal is raw, so
/// these arrive as bytes, not as signals). Without a terminal, nothing is read.
final class GamepadTerminalKeys {
    let fd: Int32
    private var terminal: TerminalMode?
    private var decoder = TerminalInputDecoder()
    private var hungUp = false

    init(fd: Int32 = STDIN_FILENO) { self.fd = fd }

    var descriptor: Int32? { terminal != nil && !hungUp ? fd : nil }

    /// Raw mode on the terminal, if stdin is one (best effort: without it only signals quit).
    func start() {
        guard isatty(fd) == 1, terminal == nil else { return }
        terminal = try? TerminalMode(fd: fd, output: isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : fd)
    }

    func stop() {
        terminal?.restore()
        terminal = nil
    }

    /// Reads what is waiting (never blocks) and returns the events it means.
    func read() -> [InputEvent] {
        guard descriptor != nil,
              let ready = try? Poller.wait(for: fd, events: .readable, timeout: .zero), !ready.isEmpty else { return [] }
        guard let bytes = try? Syscall.read(fd, max: 256, subject: "terminal") else { return [] }
        if bytes.isEmpty {
            hungUp = true   // the terminal went away: the pad drives on, signals still stop it
            return []
        }
        decoder.feed(bytes[...])
        while let event = decoder.next() {
            guard case .key(.character(let c), .press, let mods) = event else { continue }
            let lower = c.properties.lowercaseMapping
            if mods.contains(.ctrl) {
                if ["c", "d", "\\"].contains(lower) { return [.end(.quit)] }
                if lower == "z" { return [.suspend] }
            } else if lower == "q" {
                return [.end(.quit)]
            }
        }
        return []
    }
}
