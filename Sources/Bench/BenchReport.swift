import Foundation

/// One latency series in the report, with its ratios to the floor of the same run.
package struct LatencyRow: Sendable, Codable, Hashable {
    package let id: String
    package let name: String
    /// Nanoseconds.
    package let latency: Summary
    /// p50 / floor p50 and p99 / floor p99 (nil for the floors themselves, or without a floor).
    package var p50Ratio: Double?
    package var p99Ratio: Double?
    package var lost = 0
    package var stages: [NamedSummary] = []
    package var receiverSummary: String?
    /// Floors: CPU time of the echo thread per wake-up (poll, read, write), ns.
    package var cpuPerWake: Double?
    package var note: String
}

/// Everything a run measured; `--json FILE` writes this.
package struct BenchReport: Sendable, Codable {
    package var units = "latencies and ages in nanoseconds; CPU in % of one core; pacing in microseconds"
    package var machine: Machine
    package var command: String
    package var pacingMicroseconds: [Int64]
    package var floors: [LatencyRow] = []
    package var paths: [LatencyRow] = []
    package var scale: [ScaleResult] = []
    /// The receiver capped at a tenth of a core (`--only small`), or why those rows did not run.
    package var small: [SmallResult] = []
    package var smallSkipped: String?
    package var freshness: [FreshnessSimulation.Result] = []
    package var codecs: [Throughput] = []
    /// The whole path beside what a user could write instead (`--only peers`).
    package var peers: [PeerRow] = []
    package var seconds: Double = 0
    /// Issue 30's goal table, one entry per line (see ``WholePathGoals``).
    package var goals: [GoalLine] = []
    /// Issue 16's goals (the receive path against its floors, CPU at scale), all met since: kept
    /// as checks.
    package var floorGoals: [Goal] = []
    /// Lines under the table that put a measurement next to the floors it is made of.
    package var breakdown: [String] = []

    package struct Goal: Sendable, Codable, Hashable {
        package let text: String
        package let met: Bool
        package let measured: String
    }

    /// The floor every latency is compared with: one UDP hop between two threads.
    var floor: Summary? { floors.first { $0.id == "1" }?.latency }

    mutating func addRatios(_ row: inout LatencyRow) {
        guard let floor else { return }
        row.p50Ratio = Double(row.latency.p50) / Double(floor.p50)
        row.p99Ratio = Double(row.latency.p99) / Double(floor.p99)
    }

    // MARK: the table

    /// The one table a run prints (Markdown, so BENCHMARKS.md can hold it as is).
    package func table() -> String {
        var out: [String] = []
        out.append("machine: \(machine.cpus) CPUs, \(machine.cpuModel), \(machine.kernel), \(machine.swift); "
                   + "load average \(machine.loadAtStart) at start, \(machine.loadAtEnd) at end; run took \(Int(seconds.rounded())) s")
        out.append("")
        // `--only peers` has its own table below: no empty header here.
        if !(floors.isEmpty && paths.isEmpty && scale.isEmpty && small.isEmpty && freshness.isEmpty && codecs.isEmpty) {
            out.append("| # | measurement | n | p50 | p90 | p99 | p99.9 | max | vs floor p50 / p99 | notes |")
            out.append("|---|---|--:|--:|--:|--:|--:|--:|--:|---|")
        }
        for row in floors + paths {
            out.append(line(row))
            for (k, stage) in row.stages.enumerated() {
                let s = stage.summary
                out.append("| \(row.id)\(k == 0 ? "a" : "b") | ↳ \(stage.name) | \(s.count) | \(us(s.p50)) | \(us(s.p90)) | \(us(s.p99)) | \(us(s.p999)) | \(us(s.max)) | | |")
            }
        }
        for r in scale {
            let m = r.marks
            let floorRatio = floor.flatMap { f in m.map { ratio(Double($0.p50) / Double(f.p50), Double($0.p99) / Double(f.p99)) } } ?? ""
            let threads = r.threadCPU.sorted { $0.value > $1.value }.filter { $0.value >= 0.05 }
                .map { "\($0.key) \(pct($0.value))" }.joined(separator: ", ")
            let drops = r.kernelDrops.map(String.init) ?? "?"
            let received = r.received.map(String.init) ?? "?"
            let note = "**receiver CPU \(pct(r.cpuPercent)) of a core** (user \(pct(r.userPercent)), system \(pct(r.systemPercent)); "
                + "by schedstat \(pct(r.cpuPercentPrecise)): \(threads); \(fmt(r.cpuMicrosecondsPerDatagram, 1)) µs per datagram)"
                + "; sent \(r.sent), received \(received), kernel drops \(drops); \(Int(r.logLinesPerSecond.rounded())) log lines/s; log level \(r.logLevel)"
                + (r.lostMarks > 0 ? "; \(r.lostMarks) marks without W" : "") + (r.lateSends > 0 ? "; \(r.lateSends) sends >1 ms late" : "")
            out.append("| 4 | scale: \(r.controllers) controller\(r.controllers == 1 ? "" : "s") × \(r.rateHz) Hz, latency of marked packets | \(m?.count ?? 0) | \(us(m?.p50)) | \(us(m?.p90)) | \(us(m?.p99)) | \(us(m?.p999)) | \(us(m?.max)) | \(floorRatio) | \(note) |")
        }
        for r in small {
            let m = r.marks
            let failsafe = r.failsafe.isEmpty ? "none measured"
                : "\(ms(r.failsafe.min())) … \(ms(r.failsafe.max())) over \(r.failsafe.count) trials"
            let note = "**failsafe (last datagram → stop W) \(failsafe)**\(r.failsafeMissed > 0 ? ", \(r.failsafeMissed) trials without a stop" : "")"
                + "; spurious failsafes \(r.spuriousFailsafes.map(String.init) ?? "?"); classmates' states on the board \(r.foreignWrites)"
                + "; receiver CPU \(pct(r.cpuPercent)) of a core, throttled in \(r.throttledPeriods.map(String.init) ?? "?") periods of 100 ms"
                + (r.lostMarks > 0 ? "; \(r.lostMarks) marks without W" : "") + (r.lateSends > 0 ? "; \(r.lateSends) sends >1 ms late" : "")
            out.append("| 4c | small CPU: receiver capped at \(r.cpuPercentLimit) % of a core, \(r.drivers == 1 ? "the owner" : "the owner + \(r.drivers - 1) classmates") × \(r.rateHz) Hz, latency of the owner's marked packets | \(m?.count ?? 0) | \(us(m?.p50)) | \(us(m?.p90)) | \(us(m?.p99)) | \(us(m?.p999)) | \(us(m?.max)) | | \(note) |")
        }
        if let smallSkipped {
            out.append("| 4c | small CPU: not run | | | | | | | | \(smallSkipped) |")
        }
        let conflating = freshness.filter { $0.writer.hasPrefix("conflating") }
        for r in freshness {
            let a = r.age
            var note = "\(r.states) states in \(fmt(r.seconds, 0)) s, \(r.completed) commands completed"
            if r.skipped > 0 { note += ", \(r.skipped) states overwritten before sending" }
            if r.queuedAtEnd > 0 { note += ", \(r.queuedAtEnd) still queued at the end" }
            if !r.writer.hasPrefix("conflating"), let c = conflating.first(where: { $0.baud == r.baud })?.age, let a {
                note += "; **\(fmt(Double(a.p50) / Double(c.p50), 1))× / \(fmt(Double(a.p99) / Double(c.p99), 1))× the conflating writer's p50 / p99**"
            }
            out.append("| 5 | freshness: \(r.baud) baud, input \(fmt(r.inputHz, 0)) Hz, \(r.writer) (age of state at completion) | \(a?.count ?? 0) | \(ms(a?.p50)) | \(ms(a?.p90)) | \(ms(a?.p99)) | \(ms(a?.p999)) | \(ms(a?.max)) | | \(note) |")
        }
        for c in codecs {
            out.append("| 6 | \(c.name) | \(c.operations) | | | | | | | \(rate(c.perSecond))/s, \(fmt(c.nanosecondsEach, 1)) ns each (thread CPU \(fmt(c.cpuNanosecondsEach, 1)) ns) |")
        }
        if !peers.isEmpty {
            out.append("")
            out += peerTable()
        }
        if !goals.isEmpty || !floorGoals.isEmpty || !breakdown.isEmpty {
            out.append("")
            for g in goals {
                let verdict = g.met.map { $0 ? "met" : "missed" } ?? (g.measured == nil ? "not run" : "not decided")
                out.append("goal: \(g.figure): \(g.goal): **\(verdict)**\(g.measured.map { " (\($0))" } ?? "")\(g.note.map { "; \($0)" } ?? "")")
            }
            for g in floorGoals { out.append("check: \(g.text): **\(g.met ? "met" : "missed")** (\(g.measured))") }
            for line in breakdown { out.append("breakdown: \(line)") }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The peers part: latency, CPU per datagram, and ours ÷ each peer.
    private func peerTable() -> [String] {
        var out = ["| # | whole path: stdin line → W on the board pty | n | p50 | p90 | p99 | p99.9 | max | CPU per datagram (controller + receiver) | ours ÷ this: p50 / p99 / CPU | notes |",
                   "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
        for row in peers {
            guard let s = row.latency else {
                out.append("| \(row.id) | \(row.name) | | | | | | | | | \(row.skipped ?? row.note) |")
                continue
            }
            let cpu = row.cpuPerDatagram.map { total in
                "\(fmt(total / 1000, 1)) µs (\(fmt((row.controllerCPUPerDatagram ?? 0) / 1000, 1)) + \(fmt((row.receiverCPUPerDatagram ?? 0) / 1000, 1)))"
            } ?? ""
            let ratios = row.oursOverP50.map { "\(fmt($0, 2)) / \(fmt(row.oursOverP99 ?? 0, 2)) / \(row.oursOverCPU.map { fmt($0, 2) } ?? "?")" } ?? ""
            let note = row.note + (row.lost > 0 ? "; \(row.lost) samples without W" : "")
            out.append("| \(row.id) | \(row.name) | \(s.count) | \(us(s.p50)) | \(us(s.p90)) | \(us(s.p99)) | \(us(s.p999)) | \(us(s.max)) | \(cpu) | \(ratios) | \(note) |")
        }
        return out
    }

    private func line(_ row: LatencyRow) -> String {
        let s = row.latency
        let r = row.p50Ratio.map { ratio($0, row.p99Ratio ?? 0) } ?? (row.id == "1" ? "1.00 / 1.00" : "")
        var note = row.note
        if let cpu = row.cpuPerWake { note += "; echo thread CPU \(fmt(cpu / 1000, 1)) µs per wake-up (poll + read + write)" }
        if row.lost > 0 { note += "; \(row.lost) samples without W" }
        return "| \(row.id) | \(row.name) | \(s.count) | \(us(s.p50)) | \(us(s.p90)) | \(us(s.p99)) | \(us(s.p999)) | \(us(s.max)) | \(r) | \(note) |"
    }

    private func ratio(_ a: Double, _ b: Double) -> String { "\(fmt(a, 2)) / \(fmt(b, 2))" }
    private func us(_ ns: Int64?) -> String { ns.map { "\(fmt(Double($0) / 1000, 1)) µs" } ?? "" }
    private func ms(_ ns: Int64?) -> String { ns.map { "\(fmt(Double($0) / 1e6, 1)) ms" } ?? "" }
    private func pct(_ p: Double) -> String { "\(fmt(p, p < 10 ? 2 : 1)) %" }
    private func rate(_ r: Double) -> String {
        r >= 1e6 ? "\(fmt(r / 1e6, 2)) M" : r >= 1e3 ? "\(fmt(r / 1e3, 1)) k" : fmt(r, 0)
    }
    private func fmt(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}
