import ArgumentParser
import Bench
import CommandSupport
import SystemIO

struct BenchCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure latency, scale, board freshness and codec speed against floors measured in the same run.",
        discussion: """
            Build it optimised first: `swift build -c release --product analog-remote`. Prints one \
            table on stdout (progress on stderr); BENCHMARKS.md explains every row. Takes about three \
            and a half minutes on 2 cores (--quick: about a minute; --only peers: under a minute). Uses \
            loopback and pseudo-terminals only, and starts `receive`/`control` children (and the peers of \
            benchmarks/peers/, the C pair compiled with the system's C compiler) that it stops before it exits.
            """)

    @Option(help: ArgumentHelp("Also write every figure as JSON to this file.", valueName: "file"))
    var json: String?

    @Flag(help: "Fewer samples and shorter runs (for a smoke test, not for figures to keep).")
    var quick = false

    @Option(help: ArgumentHelp("Run only these parts, comma-separated: \(BenchSection.allCases.map(\.rawValue).joined(separator: ",")).",
                               valueName: "parts"))
    var only: String?

    @Option(help: ArgumentHelp("Scale runs with these controller counts only (default 1,16,64,256, plus 64 and 256 at --log-level warning).",
                               valueName: "n,n,…"))
    var controllers: String?

    @Option(help: ArgumentHelp("Pause between two latency samples, in µs (default 500-1500). A longer pause lets the CPUs go deeper idle, as between a 50 Hz controller's packets.",
                               valueName: "min-max"))
    var pacing: String?

    func validate() throws {
        _ = try sections()
        _ = try controllerCounts()
        _ = try pacingRange()
    }

    func pacingRange() throws -> ClosedRange<Int64>? {
        guard let pacing else { return nil }
        let parts = pacing.split(separator: "-").compactMap { Int64($0) }
        guard parts.count == 2, parts[0] >= 0, parts[0] <= parts[1], parts[1] <= 1_000_000 else {
            throw ValidationError("--pacing \(pacing): expected MIN-MAX in microseconds, e.g. 500-1500.")
        }
        return parts[0]...parts[1]
    }

    func controllerCounts() throws -> [Int]? {
        guard let controllers else { return nil }
        return try controllers.split(separator: ",").map { text in
            guard let n = Int(text), (1...1000).contains(n) else {
                throw ValidationError("--controllers \(text): expected a count from 1 to 1000.")
            }
            return n
        }
    }

    func sections() throws -> Set<BenchSection>? {
        guard let only else { return nil }
        var out: Set<BenchSection> = []
        for name in only.split(separator: ",") {
            guard let section = BenchSection(rawValue: String(name)) else {
                throw ValidationError("--only \(name): unknown part; choose from \(BenchSection.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            out.insert(section)
        }
        return out
    }

    func run() throws {
        let commandLine = (["analog-remote"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        let options = BenchOptions(json: json, quick: quick, only: try sections(), controllers: try controllerCounts(),
                                   pacing: try pacingRange(), commandLine: commandLine)
        try runReporting { try BenchCommand.run(options) }
    }
}
