import ArgumentParser
import BoardProtocol
import CommandSupport
import Console
import GuidedDemo
import SystemIO

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a controller, a receiver and a simulated board on this machine and show the robot moving (no hardware needed).",
        discussion: """
            Starts three real processes, exactly as on two machines with a robot: `board-sim` \
            (the kit's published firmware, simulated, on a pseudo-terminal), `receive --board serial:…` \
            and `control --input script:…` playing a square with the horn at the corners, over UDP \
            on loopback. The receiver probes the board and drives its stock profile: the wheel \
            speeds show as LED1/LED2 brightness (the left LED brighter on a right turn) and in \
            VAR1/VAR2, the horn (A) on the buzzer. Every change the board makes is printed: the \
            command it received, the wheel speeds, the LEDs and the horn. At the end the \
            controller sends neutral and the demo checks that the board's drive stopped (exit 1 \
            if it did not). Ctrl-C stops everything, the drive first. --firmware motors runs the \
            firmware with motor bytes instead.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Play the script this many times faster (0.5…20).")
    var speed: Double = 1

    @Option(help: ArgumentHelp("The simulated board's firmware: `stock` (the kit's published one) or `motors`.", valueName: "stock|motors"))
    var firmware: BoardProfileKind = .stock

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
            return try DemoRun(speed: speed, firmware: firmware).run()
        }
    }
}
