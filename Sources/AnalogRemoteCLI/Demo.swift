import ArgumentParser
import Console

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a controller, a receiver and a simulated board on this machine and show the robot moving (no hardware needed).",
        discussion: """
            Starts three real processes, exactly as on two machines with a robot: `board-sim` \
            (the kit's firmware, simulated, on a pseudo-terminal), `receive --board serial:…` and \
            `control --input script:…` playing a square with the horn at the corners, over UDP on \
            loopback. Every change the board makes is printed: the command it received and its \
            wheel speeds. At the end the controller sends neutral and the demo checks that the \
            board stopped (exit 1 if it did not). Ctrl-C stops everything, motors first.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Play the script this many times faster (0.5…20).")
    var speed: Double = 1

    @Flag(help: .hidden)
    var printScript = false

    func validate() throws {
        guard speed.isFinite, (0.5...20).contains(speed) else {
            throw ValidationError("--speed \(speed): must be between 0.5 and 20.")
        }
    }

    func run() throws {
        if printScript {
            print(DemoRun.script, terminator: "")
            return
        }
        try runReporting {
            _ = global.bootstrap()
            return try DemoRun(speed: speed).run()
        }
    }
}
