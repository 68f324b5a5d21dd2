#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RemoteWire
import SystemIO

/// Item 4: N controllers at `rate` Hz each into one `analog-remote receive --accept any` child,
/// whose board (a pty) is answered by a thread of the bench.
///
/// The controllers are N UDP sockets of the bench (N source ports), sent from one thread on an
/// even grid: controller i sends at `start + (k·N + i)·period/N`, so the receiver sees a steady
/// stream rather than bursts it could read in one wake-up (the harder case for it). They all
/// send the same state, so a packet changes nothing on the board unless the state flips: every
/// 20 ms of the measured window it flips between two driving states, and the first packet
/// carrying the new state is a *mark* whose latency to the first byte of its `W` on the board
/// side is recorded. The first `warmUp` seconds send the resting state (the receiver waits for
/// one after start-up) and are not measured.
package struct ScaleResult: Sendable, Codable, Hashable {
    package let controllers: Int
    package let rateHz: Int
    package let logLevel: String
    /// The measured window (warm-up excluded).
    package let seconds: Double
    /// Datagrams the bench sent, warm-up included, and those the receiver counted (its summary).
    package let sent: Int
    package let received: Int?
    /// Datagrams the kernel dropped at the receiver's socket over the whole run (buffer full).
    package let kernelDrops: Int?
    /// Receiver user + system CPU per second of wall time over the window, % of one core
    /// (/proc/PID/stat, 10 ms ticks), and the user and system parts of it.
    package let cpuPercent: Double
    package let userPercent: Double
    package let systemPercent: Double
    /// The same from the threads' schedstat (nanoseconds on a CPU): finer, and per thread.
    package let cpuPercentPrecise: Double
    package let threadCPU: [String: Double]
    /// Receiver CPU time per datagram received in the window (schedstat), µs.
    package let cpuMicrosecondsPerDatagram: Double
    /// Log lines the receiver wrote to stderr per second over the window.
    package let logLinesPerSecond: Double
    package let marks: Summary?
    package let lostMarks: Int
    /// Sends more than 1 ms behind their slot (the sending thread could not keep up).
    package let lateSends: Int
}

enum ScaleRun {
    static let flipInterval: Int64 = 20_000_000

    static func run(controllers n: Int, rate: Int, window: Double, warmUp: Double, logLevel: String?,
                    settings: LatencySettings) throws(BenchError) -> ScaleResult {
        let board = try BackgroundBoard(try BoardSide())
        defer { board.finish() }
        var arguments = ["--quiet", "--no-advertise", "--port", "0", "--accept", "any",
                         "--board", "serial:\(board.path)"]
        if let logLevel { arguments += ["--log-level", logLevel] }
        let child = try Child.receiver(executable: settings.executable, arguments: arguments)
        defer { child.stop(grace: .seconds(3)) }
        let portText = try child.waitForLine(prefix: "receiving on udp port ", timeout: .seconds(60),
                                             interruption: settings.interruption)
        guard let port = UInt16(portText) else { throw .setup("receiver printed a bad port: \(portText)") }

        let sockets = try ControllerSockets(count: n, port: port)
        let packets = ([Stimulus.resting] + Stimulus.states).map(StatePacket.encode)

        Monotonic.tightenTimerSlack()
        let period = Int64(1_000_000_000 / rate)
        let start = Monotonic.now() + 20_000_000
        let windowStart = start + Int64(warmUp * 1e9)
        let end = windowStart + Int64(window * 1e9)
        var current = 0              // index into `packets`: resting until the window starts
        var nextFlip = windowStart
        var flips = 0
        var markPending = false
        var marks: [(t0: Int64, state: Int)] = []
        var sent = 0, late = 0
        var before: (cpu: ProcessStats.CPU, logs: Int, sent: Int, at: Int64)?
        var slot: Int64 = 0
        let pid = child.pid

        while true {
            let due = start + slot * period / Int64(n)
            if due >= end { break }
            if before == nil && due >= windowStart {
                before = (ProcessStats.cpu(pid: pid), child.stderrLines, sent, Monotonic.now())
            }
            if due >= nextFlip && before != nil {
                current = 1 + flips % 2
                flips += 1
                nextFlip += flipInterval
                markPending = true
            }
            Monotonic.sleep(until: due)
            let t0 = Monotonic.now()
            if t0 - due > 1_000_000 { late += 1 }
            if sockets.send(packets[current], from: Int(slot % Int64(n))) { sent += 1 }
            if markPending {
                marks.append((t0, current - 1))
                markPending = false
            }
            slot += 1
            if slot % 512 == 0 {
                try settings.interruption.check()
                if child.hasExited { throw .measurement("receiver exited during the run: \(child.stderr.suffix(300))") }
            }
        }
        let after = (cpu: ProcessStats.cpu(pid: pid), logs: child.stderrLines, sent: sent, at: Monotonic.now())
        guard let before else { throw .measurement("the measured window never started") }
        // Let the last datagrams and the last W arrive before reading the drop counter.
        Monotonic.sleep(nanoseconds: 50_000_000)
        let drops = ProcessStats.udpDrops(port: port)

        child.signal(SIGTERM)
        if !child.wait(timeout: .seconds(5)) { throw .measurement("receiver did not stop within 5 s of SIGTERM") }
        let summary = ProcessStats.parseSummary(child.stdout.split(separator: "\n").last { $0.hasPrefix("summary ") }.map(String.init))
        if let problem = board.error { throw .measurement(problem) }

        let wall = Double(after.at - before.at) / 1e9
        let ticks = ProcessStats.ticksPerSecond
        var threads: [String: Double] = [:]
        for (name, t) in after.cpu.threads {
            threads[name] = Double(t - (before.cpu.threads[name] ?? 0)) / 1e9 / wall * 100
        }
        let user = Double(after.cpu.user - before.cpu.user) / ticks / wall * 100
        let system = Double(after.cpu.system - before.cpu.system) / ticks / wall * 100
        let precise = Double(after.cpu.nanoseconds - before.cpu.nanoseconds)
        let (latencies, lost) = match(marks: marks, writes: board.writes)
        return ScaleResult(controllers: n, rateHz: rate, logLevel: logLevel ?? "info (default)", seconds: wall, sent: sent,
                           received: summary["packets"], kernelDrops: drops,
                           cpuPercent: user + system, userPercent: user, systemPercent: system,
                           cpuPercentPrecise: precise / 1e9 / wall * 100, threadCPU: threads,
                           cpuMicrosecondsPerDatagram: precise / 1000 / Double(max(1, after.sent - before.sent)),
                           logLinesPerSecond: Double(after.logs - before.logs) / wall,
                           marks: Summary(latencies), lostMarks: lost, lateSends: late)
    }

    /// Each mark's latency: to the first `W` of its state after it and before the next mark.
    static func match(marks: [(t0: Int64, state: Int)], writes: [StampedLine]) -> (latencies: [Int64], lost: Int) {
        var latencies: [Int64] = []
        var lost = 0
        var w = 0
        for (k, mark) in marks.enumerated() {
            let limit = k + 1 < marks.count ? marks[k + 1].t0 : Int64.max
            let expected = Stimulus.expectedWrites[mark.state]
            while w < writes.count && writes[w].start < mark.t0 { w += 1 }
            var found: Int64?
            var scan = w
            while scan < writes.count && writes[scan].start < limit {
                if writes[scan].bytes == expected { found = writes[scan].start; break }
                scan += 1
            }
            if let found { latencies.append(found - mark.t0) } else { lost += 1 }
        }
        return (latencies, lost)
    }
}
