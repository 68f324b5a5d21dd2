import ArgumentParser
import CommandSupport
import Discovery
import RemoteWire
import SystemIO

struct Advertise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Announce a receiver of a session on the LAN without running one (for testing discovery).",
        discussion: """
            Registers NAME as type _analogremote._udp with the session's subtype and the receiver TXT \
            record (Protocol.md, "6. Discovery"), prints `registered "NAME"` (the name in use: the daemon \
            may rename on a clash), and keeps it announced until Ctrl-C. Nothing listens on --port.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The session ID (any text).")
    var session: String

    @Option(help: "The UDP port to announce.")
    var port: UInt16

    @Option(help: "Instance name (default: this machine's host name).")
    var name: String?

    @Option(help: "Failsafe timeout to announce, in milliseconds.")
    var failsafe: Int = TimingContract.standard.failsafeMilliseconds

    @Option(help: "Send rate to announce, in Hz.")
    var rate: Int = TimingContract.standard.rateHz

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        guard port != 0 else { throw ValidationError("--port must be 1…65535") }
        guard FailsafeTimeout.announcedRange.contains(failsafe) else { throw ValidationError("--failsafe must be \(FailsafeTimeout.announcedRange.text) ms") }
        guard SendRate.announcedRange.contains(rate) else { throw ValidationError("--rate must be \(SendRate.announcedRange.text) Hz") }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
    }

    func run() throws {
        try runReporting {
            let status = global.bootstrap()
            return try AdvertiseLoop(session: try SessionID(session), name: name, port: port,
                                     timing: TimingContract(failsafeMilliseconds: failsafe, rateHz: rate),
                                     output: TerminalListing(statusLine: status)).run()
        }
    }
}
