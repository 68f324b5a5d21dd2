import ArgumentParser
import Controller

/// `control`'s recording and replay options (docs/record-replay.md).
struct RecordOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Record what is sent and what the robot reports to FILE (JSON Lines, Protocol.md §10), for --input replay:FILE and `analog-remote plot`.",
                               valueName: "file"))
    var record: String?

    @Option(help: ArgumentHelp("With --input replay:FILE: play this many times faster (0.25…4; 2 halves every interval).", valueName: "x"))
    var speed: Double = 1

    @Option(help: ArgumentHelp("With --input replay:FILE: play the recording (or its --from/--to cut) this many times in a row (1…1000).",
                               valueName: "n"))
    var loop: Int = 1

    @Option(help: ArgumentHelp("With --input replay:FILE: start this many seconds into the recording.", valueName: "seconds"))
    var from: Double?

    @Option(help: ArgumentHelp("With --input replay:FILE: stop this many seconds into the recording.", valueName: "seconds"))
    var to: Double?

    func validate() throws {
        guard speed.isFinite, ReplayOptions.speedRange.contains(speed) else {
            throw ValidationError("--speed \(speed): must be between 0.25 and 4 (2 = twice as fast).")
        }
        guard ReplayOptions.loopRange.contains(loop) else { throw ValidationError("--loop \(loop): must be between 1 and 1000.") }
        if let from { guard from.isFinite, from >= 0 else { throw ValidationError("--from \(from): seconds, 0 or more.") } }
        if let to { guard to.isFinite, to > 0 else { throw ValidationError("--to \(to): seconds, more than 0.") } }
        if let from, let to, to <= from { throw ValidationError("--to \(to) must be after --from \(from).") }
        if let record, record.isEmpty { throw ValidationError("--record needs a file name.") }
    }

    /// Whether any replay option differs from its default (they need `--input replay:FILE`).
    var replayOptionsGiven: Bool { speed != 1 || loop != 1 || from != nil || to != nil }

    var replay: ReplayOptions { ReplayOptions(speed: speed, loops: loop, from: from, to: to) }
}
