#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One whole-path row of the peers part: ours (`3′`, measured again beside the peers, the same
/// way) or a peer (`peer:c`, `peer:python`), with ours ÷ it.
package struct PeerRow: Sendable, Codable, Hashable {
    package let id: String
    package let name: String
    /// Nanoseconds; nil when skipped.
    package var latency: Summary?
    package var lost = 0
    /// CPU time (schedstat, every thread) of the controller and the receiver process over the
    /// series, warm-up included, ÷ the samples taken, ns. One sample is one changed state, so one
    /// datagram carries it; the controller's 20 ms repeats and the board's replies are in it.
    package var cpuPerDatagram: Double?
    package var controllerCPUPerDatagram: Double?
    package var receiverCPUPerDatagram: Double?
    /// Ours (`3′` of this part) ÷ this row: p50, p99, CPU per datagram. Nil for ours and when skipped.
    package var oursOverP50: Double?
    package var oursOverP99: Double?
    package var oursOverCPU: Double?
    /// Why it did not run (`skipped: no C compiler`).
    package var skipped: String?
    package var note: String
}

/// The peers part: the same job — a line on the controller's stdin → `W` on the board pty, real
/// processes, paced as row 3′ — done by ours and by what a user could write instead.
enum PeerRuns {
    enum Kind: CaseIterable {
        case ours, c, python

        var id: String {
            switch self {
            case .ours: "3′"
            case .c: "peer:c"
            case .python: "peer:python"
            }
        }

        var name: String {
            switch self {
            case .ours: "whole path, ours: `control --input stdin` → `receive` (as 3′, measured beside the peers)"
            case .c: "whole path, C reference pair: peer-controller → peer-receiver (poll + recvmmsg), benchmarks/peers/*.c"
            case .python: "whole path, Python bridge: `control --input stdin --plain` → benchmarks/peers/bridge.py (select + os.write)"
            }
        }
    }

    static func run(_ programs: PeerPrograms, settings: LatencySettings,
                    progress: (String) -> Void) throws(BenchError) -> [PeerRow] {
        var rows: [PeerRow] = []
        for kind in Kind.allCases {
            let skipped = kind == .c ? programs.cSkipped : kind == .python ? programs.pythonSkipped : nil
            if let skipped {
                progress("\(kind.id): \(skipped)")
                rows.append(PeerRow(id: kind.id, name: kind.name, skipped: skipped, note: skipped))
                continue
            }
            progress("\(kind.name), \(settings.samples) samples")
            rows.append(try measure(kind, programs: programs, settings: settings))
        }
        if let ours = rows.first(where: { $0.id == Kind.ours.id }), let o = ours.latency {
            for i in rows.indices where rows[i].id != ours.id {
                guard let l = rows[i].latency else { continue }
                rows[i].oursOverP50 = Double(o.p50) / Double(l.p50)
                rows[i].oursOverP99 = Double(o.p99) / Double(l.p99)
                if let a = ours.cpuPerDatagram, let b = rows[i].cpuPerDatagram, b > 0 { rows[i].oursOverCPU = a / b }
            }
        }
        return rows
    }

    static func measure(_ kind: Kind, programs: PeerPrograms, settings: LatencySettings) throws(BenchError) -> PeerRow {
        var board = try BoardSide()
        let receiver: RunningReceiver
        switch kind {
        case .ours:
            receiver = try RunningReceiver(.child, board: &board, settings: settings)
        case .c:
            receiver = try RunningReceiver(peer: programs.cReceiver!, arguments: [board.path, "0"], label: "peer-receiver",
                                           board: &board, settings: settings)
        case .python:
            receiver = try RunningReceiver(peer: programs.python!, arguments: [programs.bridge!, board.path, "0"],
                                           label: "bridge.py", board: &board, settings: settings)
        }
        let controller: RunningController
        do {
            controller = try kind == .c
                ? RunningController(peer: programs.cController!, arguments: ["127.0.0.1:\(receiver.port)"], label: "peer-controller")
                : RunningController(.child, port: receiver.port, settings: settings,
                                    // The bridge answers no control message: without --plain our
                                    // control gives up after 2 s without an answer (exit 4).
                                    extraArguments: kind == .python ? ["--plain"] : [])
        } catch {
            _ = try? receiver.stop(board: &board)
            throw error
        }
        let pids = [controller.pid, receiver.pid].compactMap { $0 }
        let before = pids.map { ProcessStats.cpu(pid: $0).nanoseconds }
        var result: PathMeasurement
        var after: [Int64] = []
        do {
            result = try LatencyPaths.sample(board: &board, receiver: receiver, settings: settings, stages: []) { i throws(BenchError) in
                try controller.write(i < 0 ? Stimulus.restingLine : Stimulus.lines[i % 2])
            }
            after = pids.map { ProcessStats.cpu(pid: $0).nanoseconds }
        } catch {
            try? controller.stop()
            _ = try? receiver.stop(board: &board)
            throw error
        }
        try controller.stop()
        result.receiverSummary = try receiver.stop(board: &board)
        let taken = Double(settings.samples + settings.warmUp)
        let spent = zip(after, before).map { Double($0 - $1) / taken }
        var row = PeerRow(id: kind.id, name: kind.name, latency: result.total, lost: result.lost,
                          note: kind == .python ? "our `control --plain` (the bridge answers no control message), the bridge as the receiver" : "real processes")
        if spent.count == 2 {
            row.controllerCPUPerDatagram = spent[0]
            row.receiverCPUPerDatagram = spent[1]
            row.cpuPerDatagram = spent[0] + spent[1]
        }
        return row
    }
}
