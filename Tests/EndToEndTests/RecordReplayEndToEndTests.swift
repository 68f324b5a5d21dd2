#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// `control --record` and `--input replay:FILE` with the built binaries: the demo's square
/// recorded against one receiver and board-sim, replayed against a fresh pair; what the board
/// takes (its `W` lines, timed by board-sim's `--trace-times`) is compared line by line.
@Suite(.serialized) struct RecordReplayEndToEndTests {
    /// The most a replayed board write may be off the original's relative time: 5 ms (the
    /// acceptance) when this suite runs on its own — `./run.sh test` runs it so, with
    /// ANALOG_REMOTE_TIMING_TEST=1, after the parallel pass. Inside the parallel pass (150-odd
    /// suites at once on two cores) a process is measured waiting up to 54 ms for a CPU, and a
    /// starved receiver can even fold two board writes into one (a value compare then misses
    /// with no fault in the replay), so the comparison runs only in that step of its own. The
    /// replay's safety cases (ReplaySafetyEndToEndTests) run in the parallel pass.
    static let strict = ProcessInfo.processInfo.environment["ANALOG_REMOTE_TIMING_TEST"] == "1"
    static let tolerance = 0.005

    /// The processes of this test run at a real-time priority (`chrt -f 10`) where the machine
    /// allows it, so that other work on a busy machine (parallel builds, other tests) does not
    /// show as drift: what is measured is the replay's timing, not the scheduler's. Without it
    /// (no CAP_SYS_NICE) they run as usual, and a loaded machine may fail the 5 ms.
    static let realTime: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chrt"),
              let probe = try? ChildProcess(URL(fileURLWithPath: "/usr/bin/chrt"), ["-f", "10", "/bin/true"]) else { return false }
        return probe.wait() == 0
    }()

    static func analogRemote(_ arguments: [String]) throws -> ChildProcess {
        guard realTime else { return try ChildProcess(analogRemote: arguments) }
        return try ChildProcess(URL(fileURLWithPath: "/usr/bin/chrt"), ["-f", "10", Paths.analogRemote.path] + arguments)
    }

    final class Directory {
        let path = NSTemporaryDirectory() + "analog-remote-replay-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// board-sim (motors firmware, timed trace) and a receiver driving it.
    final class Rig {
        let sim: ChildProcess
        let receiver: ChildProcess
        let port: UInt16

        init(_ dir: Directory, name: String, receiverArguments: [String] = []) throws {
            let link = "\(dir.path)/\(name)"
            sim = try RecordReplayEndToEndTests.analogRemote(["board-sim", "--trace", "--trace-times", "--quiet", "--firmware", "motors", "--link", link])
            guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
                throw ClassroomTestError("board-sim did not start: \(sim.stderr)")
            }
            receiver = try RecordReplayEndToEndTests.analogRemote(["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:\(link)"]
                                        + receiverArguments)
            port = try ClassroomReceiver.port(of: receiver, what: "receiver")
        }

        /// Every `W` line the board took, with when (seconds, board-sim's monotonic clock).
        var writes: [(t: Double, line: String)] {
            var out: [(Double, String)] = []
            var at: Double?
            for line in sim.stdout.split(separator: "\n") {
                if line.hasPrefix("at "), let us = Double(line.dropFirst(3)) { at = us / 1e6 }
                else if line.hasPrefix("cmd W "), let t = at { out.append((t, String(line.dropFirst(4)))) }
            }
            return out
        }

        /// The writes from the first one that moves a motor or sets a value (the start-up safe
        /// state is all zeros), each with its time relative to that one.
        var drive: [(t: Double, line: String)] {
            let all = writes
            guard let first = all.firstIndex(where: { !$0.line.dropFirst(5).allSatisfy { $0 == "0" } }) else { return [] }
            return all[first...].map { ($0.t - all[first].t, $0.line) }
        }

        var motors: [(t: Double, line: String)] { drive.filter { $0.line.hasPrefix("W 22 ") } }

        /// Waits until the board's motors are at rest after having moved.
        func waitForRest(timeout: Duration = .seconds(10)) -> Bool {
            sim.waitForOutput(timeout: timeout) { _, _ in
                let m = motors
                return m.count > 1 && m.last?.line == "W 22 0000"
            }
        }

        func stop() {
            receiver.signal(SIGTERM)
            receiver.wait(timeout: .seconds(5))
            sim.stop()
        }
    }

    static func control(_ port: UInt16, _ arguments: [String]) throws -> ChildProcess {
        try analogRemote(["control", "--quiet", "--peer", "127.0.0.1:\(port)"] + arguments)
    }

    /// Compares `replay` with `expected` line by line: the same values, and the same relative
    /// times within the tolerance. Both are relative to their first write; the common origin is
    /// then moved by the median difference, so that one late first write (a wake-up the
    /// scheduler delayed) does not count against every line after it. Returns the largest
    /// difference from that origin (for the report).
    /// With `asserting` false it only says whether they match (a first attempt).
    /// `hostStall`: the longest the machine paused a thread that only sleeps over the recording
    /// and this replay (``HostStallWitness``): a write late by the tolerance plus that much was
    /// late by the host's pause, not the replay's clock. On a quiet host it is well under 1 ms.
    static func matches(_ replay: [(t: Double, line: String)], _ expected: [(t: Double, line: String)],
                        _ what: String, asserting: Bool, hostStall: Double) -> Bool {
        let bound = tolerance + hostStall
        var ok = replay.count >= expected.count
        if asserting { #expect(replay.count >= expected.count, "\(what): \(replay.count) writes, expected \(expected.count)") }
        let pairs = Array(zip(replay, expected))
        let differences = pairs.map { $0.t - $1.t }.sorted()
        let origin = differences.isEmpty ? 0 : differences[differences.count / 2]
        var worst = 0.0
        for (i, (r, e)) in pairs.enumerated() {
            let off = r.t - e.t - origin
            worst = max(worst, abs(off))
            ok = ok && r.line == e.line && abs(off) <= bound
            guard asserting else { continue }
            #expect(r.line == e.line, "\(what): write \(i) is \(r.line), the original's was \(e.line)")
            #expect(abs(off) <= bound,
                    "\(what): write \(i) (\(r.line)) at \(r.t) s, the original's at \(e.t) s (origin moved \(Int(origin * 1e6)) µs): off by \(Int(off * 1e6)) µs")
        }
        print("record-replay: \(what): \(pairs.count) writes, largest difference \(Int(worst * 1e6)) µs (bound \(Int(tolerance * 1e3)) ms"
              + " + the host's longest pause \(Int(hostStall * 1e6)) µs, real-time priority: \(realTime))")
        return ok
    }

    /// The acceptance: the square recorded from `control`, then replayed (whole, at --speed 2,
    /// cut with --from/--to, and three times with --loop 3) to fresh receivers on board-sim.
    ///
    /// One stall of a process the scheduler did not run in time (measured up to 12 ms when the
    /// whole suite runs in parallel on two loaded cores) would fail it without any drift in the
    /// code; so a first attempt that misses is said and the whole attempt — a new recording and
    /// new replays — is made once more, asserting. Drift (a wrong time or value in the code)
    /// misses both.
    @Test(.enabled(if: strict, "the 5 ms comparison runs alone: ANALOG_REMOTE_TIMING_TEST=1 (./run.sh test does)"))
    func theRecordedSquareReplaysWithTheSameWritesAtTheSameTimes() throws {
        let dir = try Directory()
        if try attempt(dir, round: 1, asserting: false) { return }
        print("record-replay: the first attempt missed (above); once more, from a new recording, asserting")
        _ = try attempt(dir, round: 2, asserting: true)
    }

    /// Records the square and replays it three ways; returns whether every comparison matched.
    func attempt(_ dir: Directory, round: Int, asserting: Bool) throws -> Bool {
        let file = "\(dir.path)/square-\(round).jsonl"
        var ok = true
        let witness = HostStallWitness()
        defer { witness.stop() }

        let original = try Rig(dir, name: "board-\(round)-1")
        defer { original.stop() }
        let rec = try Self.control(original.port, ["--input", "script:\(Paths.repositoryFile("config-examples/drive-square.script").path)",
                                                   "--record", file])
        #expect(rec.wait(timeout: .seconds(60)) == 0, "\(rec.stderr)")
        #expect(original.waitForRest(), "\(original.writes)")
        let recorded = original.drive
        original.stop()
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.first?.contains(#""kind":"drive""#) == true && lines.first?.contains(#""input":"script:"#) == true)
        #expect(lines.filter { $0.contains(#""e":"state""#) }.count > 500, "every state sent, at 50 Hz for 12.5 s")
        #expect(lines.contains { $0.contains(#""e":"robot","state":"driving""#) }, "the robot's reports")
        #expect(lines.contains { $0.contains(#""e":"link","rtt_ms":"#) }, "round-trip time")
        #expect(lines.last?.contains(#""e":"end","reason":"finished""#) == true)
        // The square's moves: 4 sides, 4 corners, stop, back up, stop (11 motor writes).
        #expect(recorded.filter { $0.line.hasPrefix("W 22 ") }.count == 11, "\(recorded)")

        // Whole, at speed 1.
        let whole = try Rig(dir, name: "board-\(round)-2")
        defer { whole.stop() }
        let play = try Self.control(whole.port, ["--input", "replay:\(file)"])
        #expect(play.wait(timeout: .seconds(60)) == 0, "\(play.stderr)")
        #expect(whole.waitForRest())
        ok = Self.matches(whole.drive, recorded, "replay", asserting: asserting, hostStall: witness.worst) && ok
        whole.stop()

        // The original's motor writes at 2.0 (right), 3.0 (forward), 4.5 (right), 5.5 (forward) s.
        let moves = recorded.filter { $0.line.hasPrefix("W 22 ") }
        let window = Array(moves[1...4])

        // --speed 2 --from 1.9 --to 5.6: the state in effect at 1.9 s (forward), then the four
        // writes, their intervals halved.
        let fast = try Rig(dir, name: "board-\(round)-3")
        defer { fast.stop() }
        let f = try Self.control(fast.port, ["--input", "replay:\(file)", "--speed", "2", "--from", "1.9", "--to", "5.6"])
        #expect(f.wait(timeout: .seconds(30)) == 0, "\(f.stderr)")
        #expect(fast.waitForRest())
        let fm = fast.motors
        let fastValues = fm.map(\.line) == [moves[0].line] + window.map(\.line) + ["W 22 0000"]
        ok = ok && fastValues
        if asserting { #expect(fastValues, "--speed 2: \(fm)") }
        if fm.count >= 5 {
            let t0 = fm[1].t
            ok = Self.matches(fm[1...4].map { ($0.t - t0, $0.line) }, window.map { (($0.t - window[0].t) / 2, $0.line) }, "--speed 2",
                              asserting: asserting, hostStall: witness.worst) && ok
        }
        fast.stop()

        // --loop 3 --from 1.9 --to 3.1: each pass is forward (in effect at 1.9 s), right at
        // 2.0 s, forward again at 3.0 s — which the next pass's forward continues — 1.2 s apart.
        let loops = try Rig(dir, name: "board-\(round)-4")
        defer { loops.stop() }
        let l = try Self.control(loops.port, ["--input", "replay:\(file)", "--loop", "3", "--from", "1.9", "--to", "3.1"])
        #expect(l.wait(timeout: .seconds(30)) == 0, "\(l.stderr)")
        #expect(loops.waitForRest())
        let lm = loops.motors
        let (forward, right) = (moves[0].line, moves[1].line)
        let loopValues = lm.map(\.line) == [forward, right, forward, right, forward, right, forward, "W 22 0000"]
        ok = ok && loopValues
        if asserting { #expect(loopValues, "--loop 3: \(lm)") }
        if lm.count >= 6 {
            let turns = [lm[1], lm[3], lm[5]].map { ($0.t - lm[1].t, $0.line) }
            ok = Self.matches(turns, [(0, right), (1.2, right), (2.4, right)], "--loop 3", asserting: asserting, hostStall: witness.worst) && ok
        }
        return ok
    }
}
