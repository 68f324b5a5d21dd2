#if canImport(Glibc)
import Glibc
#endif
import BoardProtocol
import BoardSimulator
import Foundation
import RemoteWire
import Synchronization
import SystemIO

/// The demo's three processes and what it shows of them. Children are this same binary
/// (/proc/self/exe), so the demo exercises exactly what a user runs by hand.
package struct DemoRun {
    let speed: Double
    /// The simulated board's firmware: the kit's published one (stock) unless asked otherwise.
    var firmware: BoardProfileKind = .stock

    package init(speed: Double, firmware: BoardProfileKind = .stock) {
        self.speed = speed
        self.firmware = firmware
    }

    /// The square the controller plays (the same as config-examples/drive-square.script, which a test
    /// keeps equal to this).
    package static let script = """
        # drive-square.script: drive a square with the A button as a "horn" at each corner.
        # Used by `analog-remote demo`; play it yourself with
        #   analog-remote control --peer HOST:PORT --input script:config-examples/drive-square.script
        #
        # Format: T_MS ANGLE BUTTONS, one per line.
        #   T_MS     milliseconds since the start, never decreasing
        #   ANGLE    tilt in radians, -1.5707964 … 1.5707964 (positive = turn right)
        #   BUTTONS  forward, backward, a, b, … joined by +, or none, or a number
        # The script ends at its last line: that state is sent, then neutral three times.

        0     0        none
        500   0        forward            # side 1
        2000  0.7854   forward            # corner: full lock right (pi/4)
        2800  0.7854   forward+a          # ... with the horn
        3000  0        forward            # side 2
        4500  0.7854   forward
        5500  0        forward            # side 3
        7000  0.7854   forward+a
        8000  0        forward            # side 4
        9500  0.7854   forward
        10500 0        none               # stop, level
        11000 -0.4     backward           # back up a little, turning left
        12000 0        b                  # B: "done"
        12500 0        none

        """

    /// The script with every time divided by `speed`.
    static func scaled(_ text: String, speed: Double) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let trimmed = line.drop { $0 == " " }
            guard let first = trimmed.split(separator: " ").first, let ms = Double(first) else { return String(line) }
            return String(Int((ms / speed).rounded())) + trimmed.dropFirst(first.count)
        }.joined(separator: "\n")
    }

    package func run() throws -> CommandOutcome {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var template = Array("/tmp/analog-remote-demo.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("demo: cannot create a folder in /tmp: \(SystemError(call: "mkdtemp", errno: errno).reason)", kind: .failed)
        }
        let dir = URL(fileURLWithPath: String(cString: made))
        defer { try? FileManager.default.removeItem(at: dir) }
        let scriptFile = dir.appendingPathComponent("drive-square.script")
        try Self.scaled(Self.script, speed: speed).write(to: scriptFile, atomically: true, encoding: .utf8)
        let link = dir.appendingPathComponent("board").path
        // The demo itself outlives Ctrl-C long enough to stop its children in order.
        let runner = try LoopRunner<Never>()

        // What the simulated robot senses, set by the demo as it plays (board-sim --sensors).
        let sensorsFile = dir.appendingPathComponent("sensors").path
        var sensed = Self.senses(elapsed: .zero, horn: false)
        try sensed.write(toFile: sensorsFile, atomically: true, encoding: .utf8)
        let board = try Child(executable, ["board-sim", "--trace", "--quiet", "--firmware", firmware.rawValue, "--link", link,
                                           "--sensors", sensorsFile],
                              name: "board-sim")
        defer { board.stop() }
        guard board.waitForLine(where: { $0.hasPrefix("/") }) != nil else {
            throw CommandFailure("demo: board-sim did not start: \(board.errors)", kind: .failed)
        }
        let receiver = try Child(executable, ["receive", "--config", "/dev/null", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:\(link)"],
                                 name: "receive")
        defer { receiver.stop() }
        guard let portLine = receiver.waitForLine(where: { $0.hasPrefix("receiving on udp port ") }),
              let port = UInt16(portLine.dropFirst("receiving on udp port ".count)) else {
            throw CommandFailure("demo: the receiver did not start: \(receiver.errors)", kind: .failed)
        }
        let size = firmware.profile.size
        print("demo: simulated board on \(link), \(firmware == .stock ? "the kit's published firmware (34-byte map, no motors): the drive shows on LED1 (left wheel) and LED2 (right wheel), the horn on the buzzer" : "the motors firmware (36-byte map, motors at 0x22/0x23)")")
        print("demo: receiver on udp port \(port), driving it over serial:\(link)")
        print("demo: controller playing a square (\(String(format: "%.1f", 12.5 / speed)) s): forward, full lock right with the horn (A) at the corners, back up, B")
        print("")
        print("   time  " + "board received".padded(18) + "  left  right  LED1 LED2  horn  senses (sw s1–s4 °C)  robot")
        // The senses column is what the driver got back (robot-sensors reports, from control's log).
        let controller = try Child(executable, ["control", "--config", "/dev/null", "--quiet", "--log-format", "json", "--log-level", "info",
                                                "--peer", "127.0.0.1:\(port)", "--input", "script:\(scriptFile.path)"], name: "control")
        defer { controller.stop() }
        let start = ContinuousClock.now
        var shown = 0
        var lastCommand = ""
        var lastMap: [UInt8]?
        var interrupted = false
        // Until the controller has exited and its neutral state has reached the board.
        while true {
            for line in board.lines(from: shown) {
                shown += 1
                if line.hasPrefix("cmd ") { lastCommand = String(line.dropFirst(4)) }
                // Only the receiver's writes are shown: the probe and read-backs (R) change nothing.
                if line.hasPrefix("map "), let map = Hex.bytes(line.dropFirst(4)), map.count == size {
                    lastMap = map
                    print(Self.describe(map, firmware: firmware, command: lastCommand, at: ContinuousClock.now - start,
                                        senses: Self.lastSenses(controller.log)))
                }
            }
            // The robot rolls toward a light (sensor 1 rises) and bumps its switch at the corners
            // (while the horn sounds).
            let next = Self.senses(elapsed: ContinuousClock.now - start, horn: lastMap.map { (1...37).contains($0[0x09]) } ?? false, speed: speed)
            if next != sensed {
                sensed = next
                try? next.write(toFile: sensorsFile + ".new", atomically: false, encoding: .utf8)
                rename(sensorsFile + ".new", sensorsFile)
            }
            if runner.stop != nil && !interrupted {
                interrupted = true
                print("demo: interrupted — stopping the controller (it sends neutral), then the receiver")
                controller.stop()
            }
            if !controller.isRunning, let map = lastMap, Self.isStopped(map, firmware: firmware) { break }
            if !controller.isRunning, ContinuousClock.now - start > .seconds(20 / speed + 5) { break }
            board.waitForOutput(after: shown, timeout: .milliseconds(200))
        }
        let controllerStatus = controller.wait()
        receiver.stop()
        let summary = receiver.output.split(separator: "\n").last { $0.hasPrefix("summary ") }
        print("")
        if let summary { print("demo: receiver \(summary)") }
        guard let map = lastMap, Self.isStopped(map, firmware: firmware) else {
            throw CommandFailure("demo: the board's drive did not stop (last map \(lastMap.map { Hex.string($0) } ?? "none"))", kind: .failed)
        }
        if interrupted { return .done }
        guard controllerStatus == 0 else {
            throw CommandFailure("demo: the controller failed (exit \(controllerStatus)): \(controller.errors)", kind: .failed)
        }
        print(firmware == .stock
              ? "demo: done — the controller sent neutral on its way out and the board's drive is at 0 (LEDs off, VAR1–VAR3 0)."
              : "demo: done — the controller sent neutral on its way out and the board's motors are at 0.")
        return .done
    }

    /// The logical wheel speeds in `map` (forward positive): the motor bytes, the left one
    /// mirrored back (0xC0 on the left is forward), or on the stock firmware VAR1/VAR2.
    static func wheels(_ map: [UInt8], firmware: BoardProfileKind) -> (left: Int, right: Int) {
        switch firmware {
        case .motors: (-Int(Int8(bitPattern: map[0x22])), Int(Int8(bitPattern: map[0x23])))
        case .stock: (Int(Int8(bitPattern: map[0x12])), Int(Int8(bitPattern: map[0x13])))
        }
    }

    /// The drive is at rest: both wheels 0 (and on the stock firmware both LEDs off).
    static func isStopped(_ map: [UInt8], firmware: BoardProfileKind) -> Bool {
        let (l, r) = wheels(map, firmware: firmware)
        return l == 0 && r == 0 && (firmware == .motors || (map[0x0F] == 0 && map[0x10] == 0))
    }

    /// One line per board change: the command, the wheels in forward terms, the LEDs as a
    /// person sees them (brightness in four steps), the horn, and what the robot does.
    /// The demo's sensors file at `elapsed`: sensor 1 rises as the robot nears a light, sensor 2
    /// mirrors it, the switch is pressed while the horn sounds (a bump at a corner).
    static func senses(elapsed: Duration, horn: Bool, speed: Double = 1) -> String {
        let seconds = (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) * speed
        let light = Int(min(255, max(0, seconds * 20)).rounded(.down)) / 10 * 10
        return "sensor1=\(light) sensor2=\(255 - light) sensor3=0 sensor4=128 switch=\(horn ? 1 : 0) temperature=21 humidity=45\n"
    }

    /// The last `sensors` object in control's JSON log, compact: `● 120 135   0 128 21°C`; blanks
    /// before the first report.
    static func lastSenses(_ log: String) -> String {
        for line in log.split(separator: "\n").reversed() where line.contains("\"sensors\":{") {
            guard let v = try? JSONDecoder().decode(SensorsLine.self, from: Data(line.utf8)).sensors else { continue }
            func n(_ key: String) -> Int { v[key] ?? 0 }
            let bars = (1...4).map { String(format: "%3d", n("sensor\($0)")) }.joined(separator: " ")
            return "\(n("switch") != 0 ? "●" : "○") \(bars) \(String(format: "%2d", n("temperature")))°C"
        }
        return String(repeating: " ", count: 21)
    }

    /// A JSON log line with a `sensors` object of numbers (control's `--log-format json`).
    private struct SensorsLine: Decodable {
        var sensors: [String: Int]
    }

    static func describe(_ map: [UInt8], firmware: BoardProfileKind, command: String, at elapsed: Duration,
                         senses: String = String(repeating: " ", count: 21)) -> String {
        let (left, right) = wheels(map, firmware: firmware)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let motion: String
        switch (left, right) {
        case (0, 0): motion = "stopped"
        case let (l, r) where l == r: motion = l > 0 ? "forward" : "backward"
        case let (l, r) where l == -r: motion = l > 0 ? "spinning right" : "spinning left"
        case let (l, r) where l + r > 0: motion = l > r ? "forward, turning right" : "forward, turning left"
        // Turning is the heading's rotation, whichever way the robot rolls: clockwise seen from
        // above (right) when the left wheel runs ahead of the right one (l > r).
        case let (l, r): motion = l > r ? "backward, turning right" : "backward, turning left"
        }
        let led = { (v: UInt8) in String(BoardSimCommand.ledText(v).prefix(4)) }
        let horn = (1...37).contains(map[0x09]) ? " ♪  " : "    "
        return String(format: "%6.2fs  ", seconds) + command.padded(18) + String(format: " %5d  %5d  ", left, right)
            + led(map[0x0F]) + " " + led(map[0x10]) + "  " + horn + "  " + senses + "  " + motion
    }
}

/// A child process of the demo (a ``SpawnedProcess``): stdout read as lines, stderr kept for
/// messages, stopped by pid.
final class Child: Sendable {
    private let process: SpawnedProcess
    private let arrived: EventFlag?

    init(_ executable: URL, _ arguments: [String], name: String) throws {
        let arrived = try? EventFlag()
        self.arrived = arrived
        do {
            process = try SpawnedProcess(executable: executable.path, arguments: arguments, label: name,
                                         onOutput: { arrived?.raise() })
        } catch {
            throw CommandFailure("demo: cannot start \(name): \(error)", kind: .failed)
        }
    }

    var isRunning: Bool { !process.hasExited }
    /// The complete lines written to stdout so far.
    private var lines: [String] {
        let text = process.stdout
        guard let last = text.lastIndex(of: "\n") else { return [] }
        return text[..<last].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
    var output: String { lines.joined(separator: "\n") }
    /// Everything written to stderr so far (control's log).
    var log: String { process.stderr }
    var errors: String {
        let text = process.stderr
        return text.isEmpty ? "(no message)" : text.split(separator: "\n").last.map(String.init) ?? text
    }

    func lines(from index: Int) -> [String] { Array(lines.dropFirst(index)) }

    /// Waits (up to `timeout`) for more than `count` stdout lines.
    func waitForOutput(after count: Int, timeout: Duration) {
        guard let flag = arrived else { return }
        let deadline = ContinuousClock.now + timeout
        while lines.count <= count, ContinuousClock.now < deadline {
            _ = try? Poller.wait(for: flag.descriptor.rawValue, events: .readable, timeout: deadline - .now)
            flag.clear()
        }
    }

    /// The first stdout line matching `predicate`, waiting up to 20 s (nil if the child died).
    func waitForLine(where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let line = lines.first(where: predicate) { return line }
            if process.hasExited { return lines.first(where: predicate) }
            waitForOutput(after: lines.count, timeout: .milliseconds(100))
        }
        return nil
    }

    /// Exit status once it has exited (waits).
    func wait() -> Int32 {
        while !process.wait(timeout: .seconds(60)) {}
        return process.exitStatus ?? -1
    }

    /// SIGTERM (each of our commands stops cleanly on it: neutral out, safe state written), then
    /// SIGKILL after 3 s. Safe to call twice.
    func stop() {
        process.stop(grace: .seconds(3))
    }
}

extension String {
    /// Pads with spaces to at least `width` characters.
    func padded(_ width: Int) -> String { count < width ? self + String(repeating: " ", count: width - count) : self }
}
