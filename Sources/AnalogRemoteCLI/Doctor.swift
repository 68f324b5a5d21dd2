#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CommandConfig
import Diagnosis
import RemoteWire

struct Doctor: ParsableCommand {
    /// The receiver's fixed default UDP port (Protocol.md §2).
    static let receiverPort = ReceiverPort.standard

    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what usually goes wrong on the robot's machine, and say how to fix each.",
        discussion: """
            One line per check: `ok`, `warn`, `fail` (or `skip` when a check needs root), what was \
            found and, when it is not ok, `fix: …`. Checks: dbus (the system bus answers), avahi \
            (avahi-daemon runs and answers DNS-SD requests), groups (you and the service user are in \
            dialout and audio), boards (each serial board answers; its stable /dev/programland name), \
            port (the receiver's UDP port is free), multicast (an interface that is up has multicast \
            and an address), mdns (other machines' mDNS responders answer a query; when machines are \
            on the LAN but none answers, the network seems to filter multicast: list robots by address, \
            e.g. `web --session ID --peer HOST:PORT`), firewall (no nft/iptables rule drops 5353/udp or the port), config (the \
            receiver's config file is valid), clock (NTP is not needed); with --session ID also broadcast (every \
            receiver of the session that DNS-SD lists on port \(ReceiverPort.standard) answers a broadcast query, so \
            `stop-all` stops it before any lookup; warns when the network drops broadcast).

            Exit status: 0 when every check is ok or skipped, 1 when any warns or fails.
            """)

    @Option(help: "The receiver's UDP port to check.")
    var port: UInt16 = Doctor.receiverPort

    @Flag(help: "Do not open the boards (e.g. while the receiver service holds them).")
    var noProbe = false

    @Option(help: ArgumentHelp("The receiver's config file to check (default: \(ConfigFiles.receiveDefault) when it exists).",
                               valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Also check that this session's receivers answer a broadcast (what stop-all sends first); takes 2 s.",
                               valueName: "id"))
    var session: String?

    @Option(help: ArgumentHelp("Test only: the directory to look for ttyACM*/ttyUSB* and programland links in.",
                               visibility: .hidden))
    var devDirectory = "/dev"

    func run() throws {
        var options = Diagnosis.Doctor.Options(port: port)
        options.probeBoards = !noProbe
        options.devDirectory = devDirectory
        let doctor = Diagnosis.Doctor(options: options)
        var checks = doctor.run(config: configCheck())
        if let session { checks.append(doctor.broadcast(session: session)) }
        for check in checks { print(check.line) }
        let status = DoctorVerdict.exitStatus(checks)
        if status != 0 { throw ExitCode(status) }
    }

    /// The receiver's config file, read the way `receive` reads it.
    func configCheck() -> DoctorCheck {
        let file = config ?? ConfigFiles.receiveDefault
        if config == nil && access(file, F_OK) != 0 {
            return DoctorCheck("config", .ok, "no \(file): the receiver runs on its defaults and command line")
        }
        do {
            let resolved = try ConfigFiles.resolve([Receive._commandName, "--config=\(file)"])
            do {
                _ = try AnalogRemote.parseAsRoot(resolved.arguments)
            } catch {
                let line = ConfigFiles.blame(error, in: resolved, command: AnalogRemote.self) ?? AnalogRemote.message(for: error)
                return DoctorCheck("config", .fail, line, fix: "edit \(file) (`analog-remote help receive` lists the options)")
            }
            return DoctorCheck("config", .ok, "\(file) is valid")
        } catch {
            return DoctorCheck("config", .fail, "\(error)", fix: "edit \(file) (`analog-remote help receive` lists the options)")
        }
    }
}
