#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardFirmware
import BoardProtocol
import Foundation
import SerialTTY
import SystemIO

/// A ``SimulatedBoard`` on a pseudo-terminal, so that any client opens it like a serial port.
///
/// With a ``WireTiming`` the board answers at that speed: bytes from the host reach the board one
/// byte-time apart, and its output leaves one byte-time apart (full duplex), like a UART board.
/// Without, it answers at once.
///
/// It notices a host that breaks Protocol.md §4.6 rule 1: bytes arriving after a complete line
/// but before that line's prompt has been sent are reported as ``Event/overlap``. With
/// ``Options/allowsWriteBehindRead`` (a host started with `receive --write-behind-read`, rule 8)
/// one `W` line sent behind a single unanswered `R` is not (the firmware answers both in one
/// pass of its loop, in order); anything behind a `W`, a second read, or a third line still is.
package final class PseudoTerminalBoard {
    package struct Options: Sendable {
        /// The firmware's map: ``MemoryMapProfile/stock`` (the published firmware) by default.
        package var profile: MemoryMapProfile = .stock
        /// The EEPROM the board boots from: erased (all 0xFF) by default, like a new board.
        package var eeprom: [UInt8] = SimulatedBoard.erasedEEPROM
        /// A faulty firmware, for tests: writes to these addresses are acknowledged and dropped.
        package var dropWrites: Set<UInt8> = []
        package var framing: SimulatedBoard.Framing = .text
        package var timing: WireTiming?
        /// A stable path to create as a symlink to the pty (replacing a stale symlink there).
        package var linkPath: String?
        /// A file of ``SensorSettings`` looked at every ``sensorsCheckInterval``: what the
        /// board's sensors, switch and BME280 read. Write it whole (to a temporary file, then
        /// rename) so the board never sees half of it.
        package var sensorsFile: String?
        /// One `W` right behind one unanswered `R` is not an overlap (Protocol.md §4.6 rule 8).
        package var allowsWriteBehindRead = false
        package init() {}
    }

    package enum Event: Sendable {
        /// The board took a line.
        case line(SimulatedBoard.Line)
        /// The host sent more before the previous command's prompt was out (other than one `W`
        /// behind one `R`, where ``Options/allowsWriteBehindRead`` allows it).
        case overlap
        /// The sensors file changed: applied (nil), or its problem (the board keeps what it had).
        case sensorsFile(problem: String?)
    }

    /// How often the sensors file is looked at.
    package static let sensorsCheckInterval: Duration = .milliseconds(20)

    package let options: Options
    package let pty: PseudoTerminal
    /// What a client opens: the link if given, else the pty.
    package var path: String { options.linkPath ?? pty.slavePath }
    package private(set) var board: SimulatedBoard
    package private(set) var overlaps = 0

    /// Output the host has not read cannot pile up without bound (a real board blocks and drops).
    static let outputLimit = 64 * 1024

    package init(options: Options) throws(BoardSimulatorError) {
        self.options = options
        if let problem = options.profile.problem { throw .badOption("memory-map profile: \(problem)") }
        do {
            pty = try PseudoTerminal()
        } catch {
            throw .system(error)
        }
        board = SimulatedBoard(profile: options.profile, framing: options.framing, eeprom: options.eeprom)
        board.dropWrites = options.dropWrites
        if let link = options.linkPath {
            do {
                try Self.installLink(link, to: pty.slavePath)
            } catch {
                pty.close()
                throw error
            }
        }
    }

    deinit { close() }

    /// Removes the link (if it still points at this pty) and closes the pty.
    package func close() {
        if let link = options.linkPath, Self.readLink(link) == pty.slavePath { unlink(link) }
        pty.close()
    }

    /// Runs until `stopDescriptor` becomes readable (a ``SignalWatcher``). `onEvent` gets each
    /// line and overlap, with the board as it is after it. `onRefresh` (for a live view) gets the
    /// board at most once per `refreshInterval`, and only after something happened.
    package func run(stopDescriptor: Int32, refreshInterval: Duration = .milliseconds(100),
                    onRefresh: (SimulatedBoard) -> Void = { _ in },
                    onEvent: (Event, SimulatedBoard) -> Void) throws(SystemError) {
        var dirty = false
        var lastRefresh = ContinuousClock.now - refreshInterval
        let master = pty.master
        let fd = master.rawValue
        let timing = options.timing
        let terminators: Set<UInt8> = options.framing == .text ? [0x0A, 0x0D, 0x00] : [0xF7]

        var input: [UInt8] = []
        var inputHead = 0
        var output: [UInt8] = board.takeOutput()   // the boot prompt
        var outputHead = 0
        var written = 0          // bytes of output written (or dropped) since start
        var queued = output.count
        // Lines taken whose prompt is not written yet: their first letter and `queued` at their prompt.
        var unanswered: [(letter: UInt8, promptEnd: Int)] = []
        // The start of the line the board is taking (at wire speed a line is taken a byte at a
        // time): its letter is that line's, not that of the rest still in `input`.
        var taking: [UInt8] = []
        var inputClock = ContinuousClock.now
        var outputClock = ContinuousClock.now
        let boot = ContinuousClock.now
        var wasBuzzing = false
        var sensorsText: [UInt8]?
        var nextSensorsCheck = ContinuousClock.now

        /// Reads the sensors file when due; applies it when its bytes changed.
        func checkSensors(now: ContinuousClock.Instant) {
            guard let file = options.sensorsFile, now >= nextSensorsCheck else { return }
            nextSensorsCheck = now + Self.sensorsCheckInterval
            guard let data = FileManager.default.contents(atPath: file) else { return }
            let bytes = [UInt8](data)
            guard bytes != sensorsText else { return }
            sensorsText = bytes
            do {
                let settings = try SensorSettings(parsing: String(decoding: bytes, as: UTF8.self))
                board.inputs = settings.applied(to: board.inputs)
                board.loop(at: now - boot)   // the firmware's next pass writes them to the map
                onEvent(.sensorsFile(problem: nil), board)
            } catch {
                onEvent(.sensorsFile(problem: "\(file): \(error)"), board)
            }
            dirty = true
        }

        func process(_ bytes: ArraySlice<UInt8>) {
            for b in bytes {
                if terminators.contains(b) { taking = [] } else if taking.count < 2 { taking.append(b) }
            }
            let lines = board.receive(bytes)
            let out = board.takeOutput()
            output += out
            queued += out.count
            for line in lines {
                if !line.discarded { unanswered.append((Self.letter(line.bytes), queued)) }
                onEvent(.line(line), board)
                dirty = true
            }
        }

        while true {
            let now = ContinuousClock.now
            checkSensors(now: now)
            // The firmware's loop runs between characters: random, timer, switch and sensors.
            board.loop(at: now - boot)
            if board.isBuzzing != wasBuzzing { wasBuzzing.toggle(); dirty = true }
            // The board takes the bytes that have "arrived".
            if inputHead < input.count {
                if let timing {
                    let due = min(input.count - inputHead, timing.bytes(from: inputClock, to: now) + (inputClock <= now ? 1 : 0))
                    if due > 0 {
                        process(input[inputHead..<inputHead + due])
                        inputHead += due
                        inputClock += timing.byteTime * due
                    }
                } else {
                    process(input[inputHead...])
                    inputHead = input.count
                }
                if inputHead == input.count { input.removeAll(keepingCapacity: true); inputHead = 0 }
            }
            // Its output leaves at wire speed.
            if outputHead < output.count {
                var allowed = output.count - outputHead
                if let timing {
                    allowed = min(allowed, timing.bytes(from: outputClock, to: now) + (outputClock <= now ? 1 : 0))
                }
                if allowed > 0 {
                    let start = outputHead
                    let n = try Syscall.nonBlocking("write", subject: pty.slavePath) {
                        output.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + start, allowed) }
                    } ?? 0
                    outputHead += n
                    written += n
                    if let timing { outputClock += timing.byteTime * n }
                }
                if output.count - outputHead > Self.outputLimit {
                    let drop = output.count - outputHead - Self.outputLimit
                    outputHead += drop
                    written += drop
                }
                if outputHead == output.count { output.removeAll(keepingCapacity: true); outputHead = 0 }
            }

            if dirty && ContinuousClock.now - lastRefresh >= refreshInterval {
                onRefresh(board)
                dirty = false
                lastRefresh = .now
            }

            // Sleep until the next byte is due, the host writes, a refresh is due, or a signal.
            var deadline: ContinuousClock.Instant? = dirty ? lastRefresh + refreshInterval : nil
            // A sounding buzzer stops by itself: look again when it may have.
            if wasBuzzing { deadline = min(deadline ?? now + refreshInterval, now + refreshInterval) }
            if options.sensorsFile != nil { deadline = min(deadline ?? nextSensorsCheck, nextSensorsCheck) }
            var wantWritable = false
            if inputHead < input.count, timing != nil { deadline = min(deadline ?? inputClock, inputClock) }
            if outputHead < output.count {
                if timing != nil {
                    deadline = min(deadline ?? outputClock, outputClock)
                    if outputClock <= ContinuousClock.now { wantWritable = true }
                } else {
                    wantWritable = true
                }
            }
            let events: Poller.Events = wantWritable ? [.readable, .writable] : .readable
            let ready = try Poller.wait([(fd, events), (stopDescriptor, .readable)], until: deadline)
            if ready[1].contains(.readable) { return }
            if ready[0].contains(.readable) {
                guard let bytes = try master.read(max: 4096), !bytes.isEmpty else { continue }
                // Waiting = complete lines whose prompt is not out yet (taken, or still in the
                // input), oldest first. A byte arriving while any waits is an overlap, unless
                // allowed: the only one waiting is an `R` and the byte belongs to one `W` line behind it.
                unanswered.removeAll { $0.promptEnd <= written }
                var waiting = unanswered.map(\.letter)
                var current = taking
                for b in input[inputHead...] {
                    if terminators.contains(b) {
                        waiting.append(Self.letter(current))
                        current = []
                    } else {
                        current.append(b)
                    }
                }
                for b in bytes {
                    if !waiting.isEmpty {
                        let behindRead = options.allowsWriteBehindRead && waiting.count == 1 && Self.isRead(waiting[0])
                            && Self.isWrite(Self.letter(current.isEmpty ? [b] : current))
                        if !behindRead {
                            overlaps += 1
                            onEvent(.overlap, board)
                            break
                        }
                    }
                    if terminators.contains(b) {
                        waiting.append(Self.letter(current))
                        current = []
                    } else {
                        current.append(b)
                    }
                }
                let now = ContinuousClock.now
                if inputHead == input.count && inputClock < now { inputClock = now }
                input += bytes
            }
            if outputHead == output.count, outputClock < ContinuousClock.now { outputClock = .now }
        }
    }

    /// A line's command letter (after a SysEx start), 0 for an empty line.
    static func letter(_ line: [UInt8]) -> UInt8 { line.first { $0 != 0xF0 } ?? 0 }
    static func isRead(_ letter: UInt8) -> Bool { letter == UInt8(ascii: "R") || letter == UInt8(ascii: "r") }
    static func isWrite(_ letter: UInt8) -> Bool { letter == UInt8(ascii: "W") || letter == UInt8(ascii: "w") }

    // MARK: the --link symlink

    static func installLink(_ link: String, to target: String) throws(BoardSimulatorError) {
        var st = stat()
        if lstat(link, &st) == 0 && (st.st_mode & S_IFMT) != S_IFLNK {
            throw .badOption("--link \(link): refusing to replace it, it is not a symlink (choose another path)")
        }
        let temporary = link + ".tmp-\(getpid())"
        unlink(temporary)
        do {
            try Syscall.call("symlink", subject: temporary) { symlink(target, temporary) }
            try Syscall.call("rename", subject: link) { rename(temporary, link) }
        } catch {
            unlink(temporary)
            throw .badOption("--link \(link): \(error.call): \(error.reason) (choose a writable path)")
        }
    }

    static func readLink(_ link: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(link, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

package enum BoardSimulatorError: Error, CustomStringConvertible, Sendable {
    case badOption(String)
    case system(SystemError)

    package var description: String {
        switch self {
        case .badOption(let s): s
        case .system(let e): "cannot create a pseudo-terminal: \(e)"
        }
    }
}
