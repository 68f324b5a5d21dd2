#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import RemoteWire
import SystemIO

/// The receiver on a Pi-class budget: `analog-remote receive` with its defaults (`--accept
/// first`, failsafe 250 ms) in a cgroup capped at a tenth of one core, its board a pty answered
/// by the bench.
///
/// One owner sends at `rate` Hz; `drivers − 1` classmates send a state of their own (backward)
/// at the same rate from 200 ms on, as a class around one robot would: under `first` none of
/// theirs may reach the board. All sockets send from one thread on an even grid. The run is:
/// 1. warm-up, 1 s: the owner rests (the receiver waits for a resting state after start-up);
/// 2. marks, `window` s: the owner flips between two driving states every 60 ms; each flip's
///    first datagram is a mark, timed to the first byte of its `W` on the board side;
/// 3. `trials` failsafe trials of 1.1 s: the owner rests 100 ms (a tripped failsafe waits for
///    rest), drives 300 ms, then falls silent for 700 ms (less than failsafe + reclaim window, so
///    it stays the owner); the time from its last datagram to the first `W` after it — the stop —
///    is the failsafe's accuracy.
/// Spurious failsafes are the trips the receiver counted (its summary) beyond the trials.
package struct SmallResult: Sendable, Codable, Hashable {
    package let cpuPercentLimit: Int
    package let drivers: Int
    package let rateHz: Int
    /// The whole run, warm-up included.
    package let seconds: Double
    package let marks: Summary?
    package let lostMarks: Int
    /// Per trial, nanoseconds from the owner's last datagram to the stop's `W`.
    package let failsafe: [Int64]
    /// Trials whose stop never came (within 1 s), or came as something other than motors 0.
    package let failsafeMissed: Int
    /// Trials whose driving state reached the board (its `W`) before their stop: every one, or
    /// a state was lost. (A mark may be skipped by design — the board link sends the latest
    /// state, so two flips that meet a busy link make one `W` — a trial's single change not.)
    package let trialsDriven: Int
    /// Failsafe trips the receiver counted, and those beyond the trials.
    package let failsafeTrips: Int?
    package let spuriousFailsafes: Int?
    /// `W` lines that carried a classmate's state: 0 unless a state was lost to a stranger.
    package let foreignWrites: Int
    /// Receiver CPU over the run, % of one core (schedstat), and the CFS periods it was throttled in.
    package let cpuPercent: Double
    package let throttledPeriods: Int?
    /// Sends more than 1 ms behind their slot.
    package let lateSends: Int
}

enum SmallCPURun {
    static let warmUp: Int64 = 1_000_000_000
    static let classmatesFrom: Int64 = 200_000_000
    static let flipInterval: Int64 = 60_000_000
    static let trialRest: Int64 = 100_000_000
    static let trialDrive: Int64 = 300_000_000
    static let trialSilence: Int64 = 700_000_000
    static let classmateState = ControllerState(angle: 0, buttons: .backward)

    /// What the owner sends at `t` ns after the start: an index into `packets` (0 resting,
    /// 1 and 2 the driving states), or nil while it is silent; and the trial it is in.
    static func owner(at t: Int64, window: Int64, trials: Int) -> (packet: Int?, trial: Int?) {
        if t < warmUp { return (0, nil) }
        if t < warmUp + window { return (1 + Int((t - warmUp) / flipInterval) % 2, nil) }
        let trialLength = trialRest + trialDrive + trialSilence
        let k = Int((t - warmUp - window) / trialLength)
        guard k < trials else { return (nil, nil) }
        let within = (t - warmUp - window) % trialLength
        if within < trialRest { return (0, k) }
        if within < trialRest + trialDrive { return (1, k) }
        return (nil, k)
    }

    static func run(drivers n: Int, rate: Int, window seconds: Double, trials: Int, percent: Int,
                    settings: LatencySettings) throws(BenchError) -> SmallResult {
        let limit = try CPULimit.make(percent: percent)
        defer { limit.remove() }
        let board = try BackgroundBoard(try BoardSide())
        defer { board.finish() }
        let child = try Child.receiver(executable: settings.executable,
                                       arguments: ["--quiet", "--no-advertise", "--port", "0", "--board", "serial:\(board.path)"])
        // Stopped before the cgroup is removed (a group with members cannot be).
        defer { child.stop(grace: .seconds(3)) }
        let portText = try child.waitForLine(prefix: "receiving on udp port ", timeout: .seconds(60),
                                             interruption: settings.interruption)
        guard let port = UInt16(portText) else { throw .setup("receiver printed a bad port: \(portText)") }
        try limit.add(pid: child.pid)

        let sockets = try ControllerSockets(count: n, port: port)
        let packets = ([Stimulus.resting] + Stimulus.states).map(StatePacket.encode)
        let classmatePacket = StatePacket.encode(classmateState)

        Monotonic.tightenTimerSlack()
        let window = Int64(seconds * 1e9)
        let total = warmUp + window + Int64(trials) * (trialRest + trialDrive + trialSilence)
        let period = Int64(1_000_000_000 / rate)
        let start = Monotonic.now() + 20_000_000
        var marks: [(t0: Int64, state: Int)] = []
        var lastOwnerSend: [Int: Int64] = [:]   // trial → its last datagram before the silence
        var firstDriveSend: [Int: Int64] = [:]  // trial → its first driving datagram
        var previous: Int?
        var late = 0
        var slot: Int64 = 0
        let before = ProcessStats.cpu(pid: child.pid)
        let throttledBefore = limit.throttledPeriods

        while true {
            let offset = slot * period / Int64(n)
            if offset >= total { break }
            let due = start + offset
            let driver = Int(slot % Int64(n))
            slot += 1
            let packet: [UInt8]
            var trial: Int?
            if driver == 0 {
                let planned = owner(at: offset, window: window, trials: trials)
                guard let index = planned.packet else { continue }
                packet = packets[index]
                trial = planned.trial
                if offset >= warmUp && offset < warmUp + window && index != previous { marks.append((0, index - 1)) }
                previous = index
            } else {
                guard offset >= classmatesFrom else { continue }
                packet = classmatePacket
            }
            Monotonic.sleep(until: due)
            let t0 = Monotonic.now()
            if t0 - due > 1_000_000 { late += 1 }
            _ = sockets.send(packet, from: driver)
            if driver == 0 {
                if let last = marks.last, last.t0 == 0 { marks[marks.count - 1].t0 = t0 }
                if let trial {
                    lastOwnerSend[trial] = t0
                    if packet == packets[1], firstDriveSend[trial] == nil { firstDriveSend[trial] = t0 }
                }
            }
            if slot % 256 == 0 {
                try settings.interruption.check()
                if child.hasExited { throw .measurement("receiver exited during the run: \(child.stderr.suffix(300))") }
            }
        }
        // The last trial's silence has no send to wait for: wait it out, or the SIGTERM below
        // would stop the motors in its place.
        Monotonic.sleep(until: start + total)
        let after = ProcessStats.cpu(pid: child.pid)
        let wall = Double(Monotonic.now() - start) / 1e9
        let throttled = limit.throttledPeriods.flatMap { a in throttledBefore.map { a - $0 } }

        child.signal(SIGTERM)
        if !child.wait(timeout: .seconds(5)) { throw .measurement("receiver did not stop within 5 s of SIGTERM") }
        let summary = ProcessStats.parseSummary(child.stdout.split(separator: "\n").last { $0.hasPrefix("summary ") }.map(String.init))
        if let problem = board.error { throw .measurement(problem) }

        let writes = board.writes
        let (latencies, lost) = ScaleRun.match(marks: marks, writes: writes)
        let stop = Stimulus.expectedWrite(Stimulus.resting)
        var failsafe: [Int64] = []
        var missed = 0
        var driven = 0
        for k in 0..<trials {
            if let drive = firstDriveSend[k], let last = lastOwnerSend[k],
               writes.contains(where: { $0.start > drive && $0.start <= last + 1_000_000_000 && $0.bytes == Stimulus.expectedWrites[0] }) {
                driven += 1
            }
            guard let last = lastOwnerSend[k],
                  let first = writes.first(where: { $0.start > last && $0.start < last + 1_000_000_000 }),
                  first.bytes == stop else { missed += 1; continue }
            failsafe.append(first.start - last)
        }
        let foreign = Stimulus.expectedWrite(classmateState)
        let trips = summary["failsafes"]
        return SmallResult(cpuPercentLimit: percent, drivers: n, rateHz: rate, seconds: wall,
                           marks: Summary(latencies), lostMarks: lost, failsafe: failsafe, failsafeMissed: missed, trialsDriven: driven,
                           failsafeTrips: trips, spuriousFailsafes: trips.map { max(0, $0 - trials) },
                           foreignWrites: writes.filter { $0.bytes == foreign }.count,
                           cpuPercent: Double(after.nanoseconds - before.nanoseconds) / 1e9 / wall * 100,
                           throttledPeriods: throttled, lateSends: late)
    }
}

extension SmallCPURun {
    /// The goals of a robot on a small board: the failsafe within 250 ± 10 ms in every trial,
    /// the owner's p99 ≤ 5 ms, no spurious failsafe, nothing of a classmate's on the board.
    static func goals(_ results: [SmallResult]) -> [BenchReport.Goal] {
        results.flatMap { r -> [BenchReport.Goal] in
            let who = "\(r.cpuPercentLimit) % of a core, \(r.drivers) driver\(r.drivers == 1 ? "" : "s")"
            let worst = r.failsafe.map { abs($0 - 250_000_000) }.max()
            let p99 = r.marks?.p99
            return [
                .init(text: "\(who): failsafe within 250 ± 10 ms in every trial",
                      met: r.failsafeMissed == 0 && (worst ?? .max) <= 10_000_000,
                      measured: worst.map { String(format: "worst %.1f ms off", Double($0) / 1e6) } ?? "no trial measured"),
                .init(text: "\(who): the owner's p99 ≤ 5 ms", met: (p99 ?? .max) <= 5_000_000 && r.lostMarks == 0,
                      measured: p99.map { String(format: "%.2f ms", Double($0) / 1e6) } ?? "no marks" ),
                .init(text: "\(who): no spurious failsafe, no classmate's state on the board",
                      met: r.spuriousFailsafes == 0 && r.foreignWrites == 0,
                      measured: "\(r.spuriousFailsafes.map(String.init) ?? "?") spurious, \(r.foreignWrites) foreign writes"),
            ]
        }
    }
}
