#if canImport(Glibc)
import Glibc
#endif
import BoardFirmware
import BoardProtocol
import Console
import Foundation
import SystemIO

/// `analog-remote board-sim`: the simulated board on a pseudo-terminal until SIGINT/SIGTERM,
/// its path on stdout, what a person would see on the board on the status line.
package enum BoardSimCommand {
    /// `traceTimes`: an `at MICROSECONDS` line (CLOCK_MONOTONIC) before each `cmd` line.
    package static func run(_ options: PseudoTerminalBoard.Options, trace: Bool, traceTimes: Bool = false,
                           status: StatusLine) throws(CommandFailure) -> CommandOutcome {
        let runner: LoopRunner<Never>
        do {
            runner = try LoopRunner()
        } catch {
            throw CommandFailure("board-sim: cannot watch signals: \(error)", kind: .failed)
        }
        let host: PseudoTerminalBoard
        do throws(BoardSimulatorError) {
            host = try PseudoTerminalBoard(options: options)
        } catch {
            switch error {
            case .badOption(let message): throw CommandFailure("board-sim: \(message)", kind: .badConfiguration)
            case .system: throw CommandFailure("board-sim: \(error)", kind: .deviceUnavailable)
            }
        }
        defer { host.close() }
        StandardOutput.write(host.path + "\n")
        status.update(Self.statusText(host.board, path: host.path, overlaps: 0), force: true)
        do {
            try host.run(stopDescriptor: runner.stopDescriptor, onRefresh: { board in
                status.update(Self.statusText(board, path: host.path, overlaps: host.overlaps), force: true)
            }) { event, board in
                switch event {
                case .line(let line):
                    if trace {
                        var out = "cmd " + ByteText.escaped(line.text) + "\n"
                        if traceTimes { out = "at \(Self.monotonicMicroseconds())\n" + out }
                        if line.changedMap { out += "map " + ByteText.hex(board.memoryMap) + "\n" }
                        StandardOutput.write(out)
                    }
                case .overlap:
                    if trace { StandardOutput.write("overlap\n") }
                }
            }
        } catch {
            throw CommandFailure("board-sim: \(error)", kind: .failed)
        }
        status.clear()
        return .done
    }

    static func monotonicMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// What a person sees on the board:
    /// `stock  LED1 ●●●○ 128  LED2 ○○○○   0  buzzer A4 440 Hz  wheels L [###|   ] +64 R [   |   ]  +0  lines 12`
    static func statusText(_ board: SimulatedBoard, path: String, overlaps: Int) -> String {
        let p = board.profile
        var parts: [String] = [p.name]
        parts.append("LED1 \(ledText(board.value(at: p.led1) ?? 0))")
        parts.append("LED2 \(ledText(board.value(at: p.led2) ?? 0))")
        parts.append("buzzer \(board.isBuzzing ? noteText(board.buzzer.tone) : "off")")
        if let (left, right) = wheels(board) {
            func pad(_ v: Int) -> String { let s = v > 0 ? "+\(v)" : "\(v)"; return String(repeating: " ", count: max(0, 4 - s.count)) + s }
            parts.append("wheels L \(StatusLine.bar(Double(left) / 127, width: 9)) \(pad(left)) R \(StatusLine.bar(Double(right) / 127, width: 9)) \(pad(right))")
        }
        parts.append("lines \(board.linesTaken)")
        if overlaps > 0 { parts.append("OVERLAPS \(overlaps)") }
        parts.append(path)
        return parts.joined(separator: "  ")
    }

    /// The logical wheel speeds the map holds (forward positive): the motor bytes (the left one
    /// mirrored back) on the motors firmware, VAR1/VAR2 on the stock firmware (as the stock
    /// mapping writes them). nil while they still hold the erased EEPROM's 0xff.
    static func wheels(_ board: SimulatedBoard) -> (Int, Int)? {
        if let (left, right) = board.motors { return (-Int(left), Int(right)) }
        let v = MemoryMapProfile.Address.variable1
        guard let l = board.value(at: v), let r = board.value(at: v + 1), (l, r) != (0xFF, 0xFF) else { return nil }
        return (Int(Int8(bitPattern: l)), Int(Int8(bitPattern: r)))
    }

    /// Brightness as four dots and the value: `●●○○ 128`.
    package static func ledText(_ value: UInt8) -> String {
        let lit = (Int(value) + 63) / 64
        let number = String(value)
        return String(repeating: "●", count: lit) + String(repeating: "○", count: 4 - lit)
            + " " + String(repeating: " ", count: 3 - number.count) + number
    }

    /// Tone 1…37 is C3…C6 (the firmware's tone table): `A4 440 Hz`.
    static func noteText(_ tone: UInt8) -> String {
        guard (1...37).contains(tone) else { return "off" }
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        let n = Int(tone) - 1
        let hertz = 130.81 * pow(2, Double(n) / 12)
        return "\(names[n % 12])\(3 + n / 12) \(Int(hertz.rounded())) Hz"
    }
}
