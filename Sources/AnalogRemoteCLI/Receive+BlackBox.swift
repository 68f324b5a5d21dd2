import ArgumentParser
import Receiver

/// `receive --black-box DIR` and its limits (docs/record-replay.md "Black box").
struct BlackBoxOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Keep the last seconds of what the receiver took and did in memory, and write them to a file in DIR (the recording format, `analog-remote plot` draws it) on a failsafe, a teacher's stop, a lost board, SIGUSR1 and exit. Off by default.",
                               valueName: "dir"))
    var blackBox: String?

    @Option(help: "With --black-box: how many seconds a black box file reaches back (\(BlackBoxSettings.windowRange.lowerBound)…\(BlackBoxSettings.windowRange.upperBound)).")
    var blackBoxSeconds: Int = BlackBoxSettings.defaultWindowSeconds

    @Option(help: "With --black-box: megabytes all black box files together may take; the oldest are removed past it (\(BlackBoxSettings.megabyteRange.lowerBound)…\(BlackBoxSettings.megabyteRange.upperBound)).")
    var blackBoxMb: Int = BlackBoxSettings.defaultMegabytes

    func validate() throws {
        if let blackBox, blackBox.isEmpty { throw ValidationError("--black-box needs a directory.") }
        guard BlackBoxSettings.windowRange.contains(blackBoxSeconds) else {
            throw ValidationError("--black-box-seconds \(blackBoxSeconds) is out of range; allowed: 1…600 seconds")
        }
        guard BlackBoxSettings.megabyteRange.contains(blackBoxMb) else {
            throw ValidationError("--black-box-mb \(blackBoxMb) is out of range; allowed: 1…10000 MB")
        }
    }

    var settings: BlackBoxSettings? {
        blackBox.map {
            var s = BlackBoxSettings(directory: $0)
            s.window = .seconds(blackBoxSeconds)
            s.maximumBytes = blackBoxMb << 20
            return s
        }
    }
}
