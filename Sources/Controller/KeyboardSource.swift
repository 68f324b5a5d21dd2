#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// The keyboard UI: raw terminal input decoded by ``TerminalInputDecoder`` and turned into
/// states by ``KeyboardModel`` (the keys and the hold rules are documented there and in
/// docs/controller.md).
///
/// The terminal is stdin; escape sequences go to stdout when it is the terminal too, else to
/// stdin's descriptor. A terminal that hangs up (read returns 0 or EIO) is a lost device.
package final class KeyboardSource: InputSource {
    private let fd: Int32
    private var terminal: TerminalMode?
    private var decoder = TerminalInputDecoder()
    private var model: KeyboardModel
    private var ended = false

    package init(fd: Int32 = STDIN_FILENO, timing: KeyboardModel.Timing = .init(), steering: KeyboardModel.Steering = .centre) {
        self.fd = fd
        self.model = KeyboardModel(timing: timing, steering: steering)
    }

    package var descriptor: Int32? { ended ? nil : fd }
    package var nextDeadline: ContinuousClock.Instant? { ended ? nil : model.nextDeadline }

    /// The keys, in one line, printed when the UI starts.
    package var help: String {
        let steer = model.steering == .centre ? "←/→ steer (back to centre on release)" : "←/→ tilt (stays)"
        return "keyboard: \(steer), \(model.timing.stepsToFullLock) presses to full lock · -/+ tilt scale · space stop · 0 centre · W/↑ forward · S/↓ backward · A · B (held while the key repeats) · Ctrl-Z suspend · q quit"
    }

    /// The status line's name: the tilt scale when it is not 100 %.
    package var name: String { model.scaleQuarters == 4 ? "keyboard" : "keyboard (tilt \(model.scaleQuarters * 25)%)" }

    package func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        guard isatty(fd) == 1 else {
            throw CommandFailure("keyboard: stdin is not a terminal (run in a terminal, or use --input stdin to read `ANGLE BUTTONS` lines)",
                                 kind: .deviceUnavailable)
        }
        let output = isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : fd
        do {
            terminal = try TerminalMode(fd: fd, output: output)
        } catch {
            throw CommandFailure("keyboard: cannot switch the terminal to raw mode: \(error)", kind: .deviceUnavailable)
        }
        return [.notice(help), .state(model.state)]
    }

    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        let bytes: [UInt8]?
        do {
            bytes = try Syscall.read(fd, max: 1024, subject: name)
        } catch {
            return lost(error.errno == EIO ? "keyboard: the terminal hung up" : "keyboard: \(error.reason)")
        }
        guard let bytes else { return [] }
        if bytes.isEmpty { return lost("keyboard: the terminal hung up") }
        decoder.feed(bytes[...])
        var events: [InputEvent] = []
        var last = model.state
        while let event = decoder.next() {
            switch model.handle(event, now: now) {
            case .quit:
                ended = true
                events.append(.end(.quit))
                return events
            case .suspend:
                events.append(.suspend)
                return events
            case .releaseEventsDetected:
                events.append(.notice("keyboard: the terminal reports key releases (kitty keyboard protocol): keys are held until released"))
            case .none:
                break
            }
            // One state per change, so a press and its release in the same read both go out.
            if model.state != last {
                last = model.state
                events.append(.state(last))
            }
        }
        return events + deadlinePassed(now: now)
    }

    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        let before = model.state
        model.expire(now: now)
        return model.state != before ? [.state(model.state)] : []
    }

    package func close() {
        terminal?.restore()
        terminal = nil
    }

    /// Gives the terminal back (before the process stops: Ctrl-Z, SIGTSTP).
    package func suspend() {
        terminal?.restore()
        terminal = nil
    }

    /// After SIGCONT: raw mode again (the shell may have reset the terminal, or it was restored
    /// before stopping), from the neutral state — nothing is held across a stop.
    package func resume(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        terminal?.restore()
        terminal = nil
        let output = isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : fd
        do {
            terminal = try TerminalMode(fd: fd, output: output)
        } catch {
            return lost("keyboard: cannot put the terminal back in raw mode after a stop: \(error)")
        }
        decoder = TerminalInputDecoder()
        model.releaseAll()
        return [.state(model.state)]
    }

    private func lost(_ why: String) -> [InputEvent] {
        ended = true
        return [.end(.deviceLost(why))]
    }
}
