import Foundation
import RemoteWire
import TestSupport
import Testing

/// `analog-remote receive --board sim --trace-board` on loopback, without DNS-SD: its port and
/// the memory maps it traced (the kit's motors at 0x22/0x23).
final class SimulatedReceiver {
    let process: ChildProcess
    let port: UInt16
    var address: String { "127.0.0.1:\(port)" }

    init(_ arguments: [String] = []) throws {
        process = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim",
                                                  "--trace-board"] + arguments)
        let prefix = "receiving on udp port "
        let started = process.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") }
        let first = process.stdout.split(separator: "\n").first ?? ""
        guard started, first.hasPrefix(prefix), let port = UInt16(first.dropFirst(prefix.count)) else {
            throw KitTestError("receiver did not start: \(process.stdout.suffix(300)) \(process.stderr.suffix(600))")
        }
        self.port = port
    }

    /// The memory maps traced so far, oldest first.
    var maps: [[UInt8]] {
        process.stdout.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("map ") else { return nil }
            return Hex.bytes(line.dropFirst(4))
        }
    }

    /// Left and right motor bytes of the latest map (the kit: left forward is negative).
    var motors: (left: Int8, right: Int8)? {
        maps.last.flatMap { $0.count > 0x23 ? (Int8(bitPattern: $0[0x22]), Int8(bitPattern: $0[0x23])) : nil }
    }

    var drivesForward: Bool { motors.map { $0.left < 0 && $0.right > 0 } ?? false }
    var atRest: Bool { motors.map { $0.left == 0 && $0.right == 0 } ?? true }

    /// Stops the receiver (SIGTERM) and returns how often its failsafe tripped while driving
    /// (`failsafes=` of its summary line), or nil without a summary.
    func failsafeTrips() -> Int? {
        process.signal(SIGTERM)
        _ = process.wait(timeout: .seconds(10))
        guard let summary = process.stdout.split(separator: "\n").last(where: { $0.hasPrefix("summary ") }),
              let field = summary.split(separator: " ").first(where: { $0.hasPrefix("failsafes=") }) else { return nil }
        return Int(field.dropFirst("failsafes=".count))
    }

    /// Checks `predicate` every 10 ms (without blocking a thread of the test's executor) until
    /// it holds or `timeout` passes; returns whether it held.
    func wait(timeout: Duration = .seconds(10), until predicate: (SimulatedReceiver) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { predicate(self) }
    }
}

struct KitTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Checks `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Runs `body` in a task cancelled after `limit` (a `for await` over a stream then ends), so a
/// missing event fails the test instead of hanging it.
func within<T: Sendable>(_ limit: Duration = .seconds(10), _ body: @escaping @Sendable () async -> T) async -> T {
    let task = Task { await body() }
    let timer = Task {
        try await Task.sleep(for: limit)
        task.cancel()
    }
    defer { timer.cancel() }
    return await task.value
}
