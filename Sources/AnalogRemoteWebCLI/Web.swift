import ArgumentParser
import CommandSupport
import Console
import Discovery
import ErrorReporting
import PhoneLink
import RemoteWire
import StopAll
import SystemIO
import WebServer

struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analog-remote-web",
        abstract: "Serve the phone page: each phone that opens it and picks a robot drives it by tilting.",
        discussion: """
            `analog-remote web …` runs this program with the same arguments (package analog-remote-web: \
            the robots need only analog-remote).

            One command serves many phones. Each page that picks a robot is one controller on the UDP \
            side, exactly like `analog-remote control`: its own socket, its own hello with the name \
            the student typed (and --pair code typed on the page), its own RTT and loss. Receivers \
            need no change.

            Robots: --session ID offers the session's receivers as DNS-SD finds them; --peer HOST:PORT \
            lists them by address; both together offer the robots listed, as robots of that session (their \
            `receive --session`), for networks that filter multicast (`doctor` says when mDNS seems filtered).

            HTTPS by default (browsers give the tilt sensor only to secure pages): a self-signed \
            certificate is made on first start and kept in $XDG_STATE_HOME/analog-remote (default \
            ~/.local/state/analog-remote), or give your own with --tls-cert/--tls-key. Phones show a \
            warning for a self-signed certificate once; compare the fingerprint printed here.

            stdout: "serving https on tcp port N" once listening, then "url URL" per IPv4 address, \
            then "certificate sha256 AA:BB:…". The first URL is shown as a QR code on stderr \
            (not with --quiet).

            Safety: a page that is hidden, frozen, closed or offline, or whose WebSocket drops, makes \
            its controller send neutral three times at once and stop; a page silent for --stale-ms \
            is neutral, for --silent-ms it is stopped. SIGINT/SIGTERM: every phone sends neutral ×3 \
            and bye, then the server stops.
            """,
        version: "analog-remote-web \(ProgramVersion.text)")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("A robot to offer: HOST:PORT of its receiver (repeat for several; no DNS-SD). With --session, the robots of that session.",
                               valueName: "host:port"))
    var peer: [String] = []

    @Option(help: ArgumentHelp("Offer the session's receivers, live, found with DNS-SD (needs avahi-daemon). With --peer: the session those robots run in (their `receive --session`), without DNS-SD, for networks that filter multicast.",
                               valueName: "id"))
    var session: String?

    @Option(help: ArgumentHelp("Address to listen on (0.0.0.0 = every IPv4 interface).", valueName: "address"))
    var host = "0.0.0.0"

    @Option(help: ArgumentHelp("TCP port to listen on (0 = any free port).", valueName: "port"))
    var port = 8443

    @Option(help: ArgumentHelp("Your own certificate (PEM) instead of the self-signed one; needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Flag(help: "Serve plain HTTP (no tilt sensor in browsers: for laptops driving with keys).")
    var plainHttp = false

    @Option(help: "Packets per second while a phone's state does not change (\(SendRate.range.text)).")
    var rate = Double(SendRate.standardHz)

    @Option(help: ArgumentHelp("A phone silent this long is neutral (50…5000 ms).", valueName: "ms"))
    var staleMs = 200

    @Option(help: ArgumentHelp("A phone silent this long is stopped and frees its robot (≥ --stale-ms, ≤ 600000 ms).", valueName: "ms"))
    var silentMs = 3000

    @Option(help: ArgumentHelp("Pages open at once (1…4096).", valueName: "n"))
    var maxPages = 256

    @Option(help: ArgumentHelp("Pages open at once from one client address (1…--max-pages; default an eighth of --max-pages, at least 4).",
                               valueName: "n"))
    var maxPagesPerAddress: Int?

    @Option(help: ArgumentHelp("Phones driving at once (1…1000).", valueName: "n"))
    var maxDrivers = 100

    @Option(help: ArgumentHelp("Also let pages of this origin open the WebSocket (repeatable): SCHEME://HOST[:PORT], e.g. https://robots.school.example. Pages this server serves need none.",
                               valueName: "origin"))
    var allowOrigin: [String] = []

    @Flag(help: "Do not print the URL as a QR code.")
    var noQr = false

    @Option(help: ArgumentHelp("Serve the teacher's dashboard at /teacher; its login takes the key in this file (the same key file as the receivers' --teacher-key-file).",
                               valueName: "file"))
    var teacherKeyFile: String?

    @Option(help: ArgumentHelp("Which student drives which robot (TOML [roster] table or CSV student,robot): a phone lists and drives only its student's robot; the dashboard shows who is missing.",
                               valueName: "file"))
    var roster: String?

    @Option(help: ArgumentHelp("Write the lesson's log (JSON Lines, one file per start) into this directory; needs --teacher-key-file.",
                               valueName: "dir"))
    var logDir: String?

    @Option(help: ArgumentHelp("Record every phone's drive in DIR, one file per driver and drive (as control --record; docs/record-replay.md).",
                               valueName: "dir"))
    var recordDir: String?

    @Option(help: "With --record-dir: new recordings a driver may start per minute; past it a drive goes unrecorded (1…1000).")
    var recordPerMinute: Int = RecordingQuota.defaultFilesPerMinute

    @Option(help: "With --record-dir: megabytes all phone recordings together may take; the oldest are removed past it (1…100000).")
    var recordMaxMb: Int = RecordingQuota.defaultMegabytes

    func validate() throws {
        guard (1...1000).contains(recordPerMinute) else { throw ValidationError("--record-per-minute \(recordPerMinute) is out of range; allowed: 1…1000") }
        guard (1...100_000).contains(recordMaxMb) else { throw ValidationError("--record-max-mb \(recordMaxMb) is out of range; allowed: 1…100000") }
        switch (peer.isEmpty, session) {
        case (true, nil): throw ValidationError("say which robots to offer: --peer HOST:PORT (repeatable), or --session ID to find them on the LAN (both: the session's robots by address).")
        case (_, let s?): do { _ = try SessionID(s) } catch { throw ValidationError("--session: \(error)") }
        default: break
        }
        for p in peer where SocketAddress.split(p) == nil {
            throw ValidationError("--peer \(p): expected HOST:PORT, IPv4:PORT or [IPv6]:PORT with a port 1…65535.")
        }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for the self-signed certificate.") }
        if plainHttp, tlsCert != nil { throw ValidationError("--plain-http and --tls-cert exclude each other.") }
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port): use 0…65535 (0 = any free port).") }
        guard rate.isFinite, rate >= Double(SendRate.range.lowerBound), rate <= Double(SendRate.range.upperBound) else {
            throw ValidationError("--rate \(rate): must be between \(SendRate.range.lowerBound) and \(SendRate.range.upperBound) packets per second.")
        }
        guard (50...5000).contains(staleMs) else { throw ValidationError("--stale-ms \(staleMs): use 50…5000 (below the receivers' failsafe, default \(FailsafeTimeout.standard.milliseconds)).") }
        guard silentMs >= staleMs, silentMs <= 600_000 else { throw ValidationError("--silent-ms \(silentMs): use --stale-ms…600000.") }
        guard (1...4096).contains(maxPages) else { throw ValidationError("--max-pages \(maxPages): use 1…4096.") }
        guard (1...1000).contains(maxDrivers) else { throw ValidationError("--max-drivers \(maxDrivers): use 1…1000.") }
        if let n = maxPagesPerAddress, !(1...maxPages).contains(n) {
            throw ValidationError("--max-pages-per-address \(n): use 1…\(maxPages) (--max-pages).")
        }
        for o in allowOrigin where OriginPolicy.Origin(o) == nil {
            throw ValidationError("--allow-origin \(o): expected SCHEME://HOST[:PORT] with scheme http or https and no path, e.g. https://robots.school.example.")
        }
        if logDir != nil, teacherKeyFile == nil { throw ValidationError("--log-dir needs --teacher-key-file (the log is the teacher's dashboard's).") }
    }

    func run() throws {
        try runReporting {
            let status = global.bootstrap()
            let robots: WebOptions.Robots
            var sessionText = ""
            if let session, peer.isEmpty {
                robots = .session(try SessionID(session))
                sessionText = session
            } else {
                // By address; the hellos, the dashboard's commands and the name queries carry
                // the session when one is given (receivers refuse another session's commands).
                sessionText = session ?? ""
                var list: [(label: String, address: SocketAddress)] = []
                for p in peer {
                    do throws(AddressError) {
                        list.append((p, try SocketAddress.resolve(p)))
                    } catch {
                        throw UserFacingError("--peer \(p): cannot resolve \(error.host): \(error.reason) (check the name, or give an IP address)",
                                              status: .networkUnavailable)
                    }
                }
                robots = .peers(list)
            }
            let security: WebOptions.Security = if plainHttp { .plainHTTP }
                else if let tlsCert, let tlsKey { .files(certificate: tlsCert, key: tlsKey) }
                else { .selfSigned(directory: WebCertificate.stateDirectory()) }
            var options = WebOptions(robots: robots, security: security, host: host, port: port, session: sessionText, rate: rate,
                                     timing: .init(stale: .milliseconds(staleMs), silent: .milliseconds(silentMs)),
                                     limits: .init(pages: maxPages, drivers: maxDrivers, pagesPerAddress: maxPagesPerAddress), qrCode: !noQr)
            options.allowedOrigins = Set(allowOrigin.compactMap(OriginPolicy.Origin.init))
            options.teacherKeyFile = teacherKeyFile
            options.logDirectory = logDir
            options.rosterFile = roster
            options.recordDirectory = recordDir
            options.recordQuota = RecordingQuota(filesPerMinute: recordPerMinute, maximumBytes: recordMaxMb << 20)
            // The robots the dashboard has proven are the ones `stop-all` on this machine sends to
            // first (KnownReceivers): the teacher's emergency stop need not wait for DNS-SD.
            let stateDirectory = StateDirectory.path(environment: StateDirectory.processEnvironment)
            options.provenRobots = { session, robots in
                guard !robots.isEmpty else { return }
                KnownReceivers(session: session, entries: robots.map { .init(address: $0.address, robot: $0.robot) })
                    .save(directory: stateDirectory)
            }
            return try WebCommand.run(options, status: status)
        }
    }
}
