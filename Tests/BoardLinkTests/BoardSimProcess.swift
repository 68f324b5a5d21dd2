import BoardProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

/// `analog-remote board-sim --trace --quiet …`, started for a test and stopped by its deinit.
/// The motors firmware unless the arguments name a `--firmware`.
final class BoardSimProcess {
    let child: ChildProcess
    let path: String

    init(_ arguments: [String]) throws {
        let firmware = arguments.contains("--firmware") ? [] : ["--firmware", "motors"]
        child = try ChildProcess(analogRemote: ["board-sim", "--trace", "--quiet"] + firmware + arguments)
        guard child.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
            throw TestFailure("board-sim printed no path; stderr: \(child.stderr)")
        }
        path = String(child.stdout.prefix { $0 != "\n" })
    }

    /// Trace lines after the path.
    var trace: [String] { child.stdout.split(separator: "\n").dropFirst().map(String.init) }
    var commands: [String] { trace.filter { $0.hasPrefix("cmd ") }.map { String($0.dropFirst(4)) } }
    var maps: [[UInt8]] { trace.filter { $0.hasPrefix("map ") }.map { BoardTranscripts.bytes(hex: String($0.dropFirst(4))) } }
    var overlaps: Int { trace.filter { $0 == "overlap" }.count }

    /// Waits until the latest map satisfies `predicate`.
    func waitForMap(timeout: Duration = .seconds(10), _ predicate: ([UInt8]) -> Bool) -> Bool {
        eventually(timeout: timeout) { maps.last.map(predicate) ?? false }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Polls `condition` every 2 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// A fresh directory for --link paths, removed by deinit.
final class TemporaryDirectory {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "analog-remote-board-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Collects a connection's events from its thread.
final class EventLog<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    func append(_ e: Event) { events.withLock { $0.append(e) } }
    var all: [Event] { events.withLock { $0 } }
}

extension ChildProcess {
    /// Waits until the collected output satisfies `predicate`, even after the process exited
    /// (its last bytes may still be on their way through the pipe; ``waitForOutput`` stops
    /// looking at exit).
    func eventuallyOutput(timeout: Duration = .seconds(10), _ predicate: (String, String) -> Bool) -> Bool {
        eventually(timeout: timeout) { predicate(stdout, stderr) }
    }
}

/// The motors profile's safe state as board-sim traces it: three runs, ascending.
let safeStateLines = ["W 09 0000", "W 0f 0000", "W 22 0000"]
/// The stock profile's: buzzer, LEDs, VAR1–VAR3.
let stockSafeStateLines = ["W 09 0000", "W 0f 0000", "W 12 000000"]

/// True when the commands begin with the probe (`R 00 55`), then the whole safe state and no
/// other write (a command repeated after a timeout on a loaded machine is allowed, and the
/// read-backs `R` of the safe state's runs may come between them).
func beginsWithSafeState(_ commands: [String], _ safe: [String] = safeStateLines) -> Bool {
    guard commands.first == BoardIdentity.probe.text else { return false }
    let head = commands.drop { $0 == BoardIdentity.probe.text }.prefix { safe.contains($0) || $0.hasPrefix("R ") }
    return Set(head.filter { $0.hasPrefix("W ") }) == Set(safe)
}
