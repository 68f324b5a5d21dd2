#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Foundation
import SystemIO

/// What `analog-remote bench` was asked to do.
package struct BenchOptions: Sendable {
    package var json: String?
    package var quick = false
    /// Run only these parts (nil: all).
    package var only: Set<BenchSection>?
    /// Scale runs: these controller counts instead of 1, 16, 64, 256 (and no extra runs).
    package var controllers: [Int]?
    /// The pause between latency samples, µs (default 500…1500; the whole path keeps 2000…3000).
    package var pacing: ClosedRange<Int64>?
    /// Shown in the report: how the run was started.
    package var commandLine: String

    package init(json: String?, quick: Bool, only: Set<BenchSection>?, controllers: [Int]?, pacing: ClosedRange<Int64>? = nil,
                commandLine: String) {
        self.pacing = pacing
        self.json = json
        self.quick = quick
        self.only = only
        self.controllers = controllers
        self.commandLine = commandLine
    }
}

package enum BenchSection: String, CaseIterable, Sendable {
    case floor, receive, whole, phone, scale, small, freshness, codec, peers
}

/// `analog-remote bench`: measures, prints one table on stdout (progress on stderr), and with
/// `--json FILE` writes every figure. See BENCHMARKS.md for what each row means.
package enum BenchCommand {
    /// Sample counts and durations: the default run takes about three and a half minutes on 2
    /// cores (the peers part under a minute of it), `--quick` about a minute.
    struct Plan {
        var floorSamples: Int
        var hopSamples: Int
        var pathSamples: Int
        /// The whole path is paced more slowly (see ``wholePacing``), so it gets fewer samples.
        var wholeSamples: Int
        /// Each of the three rows of the peers part (ours, C, Python), paced as the whole path:
        /// the part stays under a minute.
        var peerSamples: Int
        var warmUp: Int
        var scaleWindow: Double
        var scaleWarmUp: Double
        var scaleControllers = [1, 16, 64, 256]
        /// Extra scale runs with `--log-level warning`: what the receiver costs without its
        /// per-packet ownership log lines (see BENCHMARKS.md).
        var scaleQuiet: [Int]
        var freshnessSeconds: Double
        var codecMinimum: Int64
        /// The small-CPU rows: the marks' window and the failsafe trials of each.
        var smallWindow: Double = 8
        var smallTrials = 8

        static let full = Plan(floorSamples: 10_000, hopSamples: 5_000, pathSamples: 10_000, wholeSamples: 5_000, peerSamples: 4_000, warmUp: 500,
                               scaleWindow: 8, scaleWarmUp: 1, scaleQuiet: [64, 256], freshnessSeconds: 10,
                               codecMinimum: 300_000_000)
        static let quick = Plan(floorSamples: 2_000, hopSamples: 1_000, pathSamples: 2_000, wholeSamples: 1_000, peerSamples: 1_000, warmUp: 200,
                                scaleWindow: 2, scaleWarmUp: 0.5, scaleQuiet: [64], freshnessSeconds: 10,
                                codecMinimum: 100_000_000, smallWindow: 3, smallTrials: 4)
    }

    /// Between two samples of the whole path: 2–3 ms. The controller sends a change at once
    /// unless its previous send was under 1 ms ago (its minimum gap, by design); at the 0.5–1.5 ms
    /// of the other series most samples would measure that wait instead of the path.
    static let wholePacing: ClosedRange<Int64> = 2000...3000
    /// The phone path is paced below a page's message limit (200 a second, `web`'s PageBridge):
    /// faster, the server would drop samples as a flood.
    static let phonePacing: ClosedRange<Int64> = 6000...8000

    package static func run(_ options: BenchOptions) throws(CommandFailure) -> CommandOutcome {
        let interruption = Interruption()
        var plan = options.quick ? Plan.quick : Plan.full
        if let controllers = options.controllers {
            plan.scaleControllers = controllers
            plan.scaleQuiet = []
        }
        let pacer = options.pacing.map { Pacer(microseconds: $0) } ?? Pacer()
        let executable: String
        do { executable = try Child.ownExecutable() } catch { throw CommandFailure(error.description, kind: .failed) }
        let settings = LatencySettings(samples: plan.pathSamples, warmUp: plan.warmUp, pacer: pacer,
                                       interruption: interruption, executable: executable)
        var report = BenchReport(machine: .current(), command: options.commandLine,
                                 pacingMicroseconds: [pacer.range.lowerBound / 1000, pacer.range.upperBound / 1000])
        let started = Monotonic.now()
        func wanted(_ section: BenchSection) -> Bool { options.only?.contains(section) ?? true }
        func progress(_ text: String) {
            let elapsed = Double(Monotonic.now() - started) / 1e9
            StandardError.write("bench [\(String(format: "%5.1f", elapsed)) s] \(text)\n")
        }

        do {
            if wanted(.floor) {
                let floors: [(String, String, Int, String, (Int, Int, Pacer, Interruption) throws(BenchError) -> PingPong.Result)] = [
                    ("1", "floor: UDP loopback one-way (RTT/2), two plain sockets", plan.floorSamples,
                     "two threads, each blocked in poll + recv; 8-byte datagram", PingPong.udp),
                    ("1p", "hop: thread wake-up through a pipe (RTT/2)", plan.hopSamples,
                     "how one thread wakes another (EventFlag); the receive path no longer crosses it (the receive loop writes the W itself when the board link is idle)", PingPong.pipe),
                    ("1t", "hop: pseudo-terminal, serial side ↔ board side (RTT/2)", plan.hopSamples,
                     "10-byte W line; raw mode, as `serial:` opens it", PingPong.pty),
                ]
                for (id, name, samples, note, measure) in floors {
                    progress("\(name), \(samples) samples")
                    let r = try measure(samples, plan.warmUp, pacer, interruption)
                    var row = LatencyRow(id: id, name: name, latency: r.halfRoundTrip,
                                         stages: [NamedSummary(name: "leg there, stamped (wakes a thread idle since the last sample)", summary: r.there),
                                                  NamedSummary(name: "leg back, stamped (wakes a thread that slept microseconds ago)", summary: r.back)],
                                         cpuPerWake: r.cpuPerWake, note: note)
                    if id != "1" { report.addRatios(&row) }
                    report.floors.append(row)
                }
            }
            let paths: [(BenchSection, String, Placement, String)] = [
                (.receive, "2", .inProcess, "receive path: datagram → W on the board pty; ReceiverService on a thread of the bench"),
                (.receive, "2′", .child, "receive path: datagram → W on the board pty; `analog-remote receive` as a child process"),
                (.receive, "2r", .child, "receive path without sensor reads: as 2′ with `receive --sensor-rate 0` (2′ reads the sensors at 10 Hz); the two take turns, one sample each"),
                (.whole, "3", .inProcess, "whole path: stdin line → W on the board pty; SendLoop + ReceiverService on threads of the bench"),
                (.whole, "3′", .child, "whole path: stdin line → W on the board pty; `control` and `receive` as child processes"),
                (.whole, "3n", .child, "whole path, named: as 3′ with `control --name` (the control session rides along, nothing sealed)"),
                (.whole, "3s", .child, "whole path, authenticated: as 3′ with `receive --accept secret` and `control --secret` (every state sealed, 50 Hz)"),
            ]
            var whole = settings
            whole.samples = plan.wholeSamples
            whole.pacer = Pacer(microseconds: Self.wholePacing)
            // 2′ and 2r take turns, a sample each (their ratio is a goal): measured together, at 2′.
            var withoutReads: PathMeasurement?
            for (section, id, placement, name) in paths where wanted(section) {
                let m: PathMeasurement
                switch id {
                case "2′":
                    progress("\(name), and 2r (reads off) taking turns with it, \(plan.pathSamples) samples each")
                    let pair = try LatencyPaths.receivePathsTakingTurns(settings, extraArguments: ["--sensor-rate", "0"])
                    m = pair.0
                    withoutReads = pair.1
                case "2r":
                    guard let measured = withoutReads else { continue }
                    m = measured
                default:
                    progress("\(name), \(section == .receive ? plan.pathSamples : plan.wholeSamples) samples")
                    m = section == .receive ? try LatencyPaths.receivePath(placement, settings)
                                            : try LatencyPaths.wholePath(placement, whole, secret: id == "3s", named: id == "3n")
                }
                var row = LatencyRow(id: id, name: name, latency: m.total, lost: m.lost, stages: m.stages,
                                     receiverSummary: m.receiverSummary,
                                     note: placement == .inProcess ? "stages stamped at the receiver's hand-off to the board link" : "real binaries")
                report.addRatios(&row)
                report.paths.append(row)
            }
            if wanted(.phone) {
                let name = "phone path: page message → W on the board pty; `web --plain-http` and `receive` as child processes"
                progress("\(name), \(plan.wholeSamples) samples")
                var phone = whole
                phone.pacer = Pacer(microseconds: Self.phonePacing)
                let m = try LatencyPaths.phonePath(phone)
                var row = LatencyRow(id: "3w", name: name, latency: m.total, lost: m.lost, receiverSummary: m.receiverSummary,
                                     note: "real binaries; the page's WebSocket text message is the phone event")
                report.addRatios(&row)
                report.paths.append(row)
            }
            if wanted(.peers) {
                progress("peers: compiling the C reference pair (benchmarks/peers/)")
                let programs = PeerPrograms.prepare()
                defer { programs.remove() }
                var peer = whole
                peer.samples = plan.peerSamples
                peer.warmUp = min(plan.warmUp, 300)
                report.peers = try PeerRuns.run(programs, settings: peer, progress: progress)
            }
            if wanted(.scale) {
                let runs = plan.scaleControllers.map { ($0, String?.none) } + plan.scaleQuiet.map { ($0, String?.some("warning")) }
                for (n, level) in runs {
                    progress("scale: \(n) controllers × 100 Hz for \(plan.scaleWindow) s\(level.map { ", --log-level \($0)" } ?? "")")
                    report.scale.append(try ScaleRun.run(controllers: n, rate: 100, window: plan.scaleWindow, warmUp: plan.scaleWarmUp,
                                                         logLevel: level, settings: settings))
                }
            }
            if wanted(.small) {
                // Needs a cgroup of its own: where none can be made (no root, no delegation) the
                // rows say why instead of failing the whole bench.
                if let why = CPULimit.unavailable() {
                    report.smallSkipped = why
                    progress("small: skipped: \(why)")
                }
                for n in report.smallSkipped == nil ? [1, 8] : [] {
                    progress("small: receiver capped at 10 % of a core, \(n) driver\(n == 1 ? "" : "s") × 50 Hz, \(plan.smallTrials) failsafe trials")
                    report.small.append(try SmallCPURun.run(drivers: n, rate: 50, window: plan.smallWindow, trials: plan.smallTrials,
                                                            percent: 10, settings: settings))
                }
            }
            if wanted(.freshness) {
                progress("freshness: discrete-event simulation, 9600 and 115200 baud")
                let count = Int(plan.freshnessSeconds * 100)
                for baud in [9600, 115_200] {
                    report.freshness.append(FreshnessSimulation.run(ConflatingWriter(), baud: baud, inputPeriod: 10_000_000, count: count))
                    report.freshness.append(FreshnessSimulation.run(FIFOWriter(), baud: baud, inputPeriod: 10_000_000, count: count))
                }
            }
            if wanted(.codec) {
                progress("codec throughput")
                report.codecs = CodecThroughput.all(minimum: plan.codecMinimum)
            }
        } catch {
            if case .interrupted = error {
                StandardError.write("analog-remote: bench \(error.description)\n")
                return .incomplete
            }
            throw CommandFailure("bench: \(error.description)", kind: .failed)
        }

        report.seconds = Double(Monotonic.now() - started) / 1e9
        report.machine.loadAtEnd = Machine.load()
        report.goals = WholePathGoals.judge(report)
        report.floorGoals = floorGoals(report)
        report.breakdown = breakdown(report)
        print(report.table(), terminator: "")
        if let path = options.json {
            do {
                try LineFile.replace(path, with: String(decoding: report.json(), as: UTF8.self), mode: 0o644)
            } catch {
                throw CommandFailure("--json: \(error) (choose a writable path)", kind: .failed)
            }
        }
        return .done
    }

    /// The receive path crosses two hops, each measured alone as a floor: UDP into the receive
    /// loop, and the pty to the board (the receive loop writes the `W` itself when the link is
    /// idle; the pipe that used to wake the board link's thread is measured as 1p for comparison).
    /// Their sum is what the path would cost if our own code took no time at all.
    static func breakdown(_ report: BenchReport) -> [String] {
        func leg(_ id: String) -> Summary? { report.floors.first { $0.id == id }?.stages.first?.summary }
        guard let udp = leg("1"), let pty = leg("1t") else { return [] }
        func us(_ ns: Int64) -> String { String(format: "%.1f µs", Double(ns) / 1000) }
        let p50 = udp.p50 + pty.p50
        var lines = ["the receive path crosses 2 hops; their floors (leg there, p50): UDP \(us(udp.p50)) + pty \(us(pty.p50)) = \(us(p50))"]
        for row in report.paths where row.id.hasPrefix("2") {
            lines.append("\(row.id): p50 \(us(row.latency.p50)) = \(String(format: "%.2f", Double(row.latency.p50) / Double(p50)))× the sum of its hop floors")
        }
        return lines
    }

    /// Issue 16's goals (met since, kept as checks), as ratios to floors of the same run: the
    /// receive path against the sum of the UDP and pty hops (rows 1 and 1t, half round trips),
    /// the receiver's CPU at scale.
    static func floorGoals(_ report: BenchReport) -> [BenchReport.Goal] {
        var goals: [BenchReport.Goal] = []
        let udp = report.floors.first { $0.id == "1" }?.latency
        let pty = report.floors.first { $0.id == "1t" }?.latency
        if let udp, let pty {
            for row in report.paths where row.id == "2" || row.id == "2′" {
                let p50 = Double(row.latency.p50) / Double(udp.p50 + pty.p50)
                let p99 = Double(row.latency.p99) / Double(udp.p99 + pty.p99)
                goals.append(.init(text: "receive path (\(row.id)) p50 within 1.3× the UDP + pty floors' p50", met: p50 <= 1.3,
                                   measured: String(format: "%.2f×", p50)))
                goals.append(.init(text: "receive path (\(row.id)) p99 within 2× the UDP + pty floors' p99", met: p99 <= 2,
                                   measured: String(format: "%.2f×", p99)))
            }
        }
        for (controllers, limit) in [(64, 5.0), (256, 10.0)] {
            if let s = report.scale.first(where: { $0.controllers == controllers && $0.logLevel.hasPrefix("info") }) {
                goals.append(.init(text: "\(controllers) controllers × 100 Hz under \(Int(limit)) % of one core", met: s.cpuPercent < limit,
                                   measured: String(format: "%.2f %%", s.cpuPercent)))
            }
        }
        goals += SmallCPURun.goals(report.small)
        let drops = report.scale.compactMap(\.kernelDrops).reduce(0, +)
        if !report.scale.isEmpty {
            goals.append(.init(text: "no kernel drops in the scale rows", met: drops == 0, measured: "\(drops)"))
        }
        return goals
    }
}
