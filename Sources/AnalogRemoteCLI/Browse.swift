import ArgumentParser
import CommandSupport
import Controller
import Discovery
import RemoteWire
import SystemIO

struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "List the receivers of a session, live.",
        discussion: """
            Prints one line per change on stdout until Ctrl-C: `SECONDS available "NAME" ADDRESS:PORT v=1 \
            peer=… failsafe=MS rate=HZ if=IFACE`, then `updated …`, `unavailable "NAME"`, or `ignored "NAME": why`. \
            With --once: browses for --timeout seconds, prints each receiver found (same fields, no time), \
            exits 0. With --follow (or --receiver): also shows which receiver a controller would follow and how \
            often it would send (`state …`, `follow …`, `stop …`); with several receivers and no --receiver it \
            lists them and exits 6, as `control` does. Needs a running avahi-daemon (exit 5 otherwise).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The session ID shared by receivers and controllers (any text).")
    var session: String

    @Flag(help: "Browse for --timeout seconds, print what was found, exit (for scripts).")
    var once = false

    @Option(help: "Seconds to browse with --once.")
    var timeout: Double = 2

    @Flag(help: "Show the receiver a controller would follow, as `control` chooses it.")
    var follow = false

    @Option(help: "With --follow: the receiver to follow (instance name or peer id). Implies --follow.")
    var receiver: String?

    @Option(help: "With --follow: the send rate a controller was asked for, in Hz.")
    var rate: Int?

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be in 0…3600 seconds") }
        if let rate, !SendRate.announcedRange.contains(rate) { throw ValidationError("--rate must be \(SendRate.announcedRange.text) Hz") }
    }

    func run() throws {
        try runReporting {
            let sessionID = try SessionID(session)
            let status = global.bootstrap()
            let rate = rate
            return try BrowseLoop(session: sessionID, once: once ? .milliseconds(Int(timeout * 1000)) : nil,
                                  follow: follow || receiver != nil, receiver: receiver, requestedRateHz: rate,
                                  output: TerminalListing(statusLine: status),
                                  followLine: { BrowseListing.line(for: $0, requestedRateHz: rate) }).run()
        }
    }
}
