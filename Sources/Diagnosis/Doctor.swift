#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardLink
import BoardProtocol
import Discovery
import SerialTTY
import Foundation
import SystemIO

/// What `analog-remote doctor` looks at, in order. Each check is one function returning one
/// ``DoctorCheck``; none of them changes the machine (the board probe reads its memory map,
/// the port check binds and closes at once).
package struct Doctor: Sendable {
    package struct Options: Sendable {
        /// The receiver's UDP port (the fixed default unless `--port`).
        package var port: UInt16
        /// Groups the receiver needs: serial boards (`dialout`), MIDI boards (`audio`).
        package var groups = ["dialout", "audio"]
        /// The service's system user, checked as well when it exists.
        package var serviceUser = "analog-remote"
        /// The receiver's systemd unit, whose state the `service` line reports.
        package var serviceUnit = "analog-remote.service"
        /// Open each serial board and read its memory map.
        package var probeBoards = true
        package var devDirectory = "/dev"
        /// `/run/dbus/system_bus_socket`, or `$DBUS_SYSTEM_BUS_ADDRESS`'s `unix:path=`.
        package var systemBus: String
        package var avahiPidFile = "/run/avahi-daemon/pid"

        package init(port: UInt16, systemBus: String? = nil) {
            self.port = port
            self.systemBus = systemBus ?? Self.systemBusPath()
        }

        static func systemBusPath() -> String {
            if let raw = getenv("DBUS_SYSTEM_BUS_ADDRESS") {
                let address = String(cString: raw)
                if let r = address.range(of: "unix:path=") {
                    return String(address[r.upperBound...].prefix { $0 != "," && $0 != ";" })
                }
            }
            return "/run/dbus/system_bus_socket"
        }
    }

    package let options: Options

    package init(options: Options) { self.options = options }

    /// Every check; `config` is the receiver's config file check, made by the caller (it knows
    /// the command line).
    package func run(config: DoctorCheck?) -> [DoctorCheck] {
        var checks = [dbus(), avahi(), groups()]
        checks += boards()
        checks += [port(), multicast(), mdns(), firewall()]
        if let config { checks.append(config) }
        checks.append(service())
        checks.append(DoctorCheck("clock", .ok, "not needed: nothing in the protocol compares clocks between machines, so NTP may be off"))
        return checks
    }

    // MARK: D-Bus and Avahi

    package func dbus() -> DoctorCheck {
        let path = options.systemBus
        switch Self.connectUnix(path) {
        case 0:
            return DoctorCheck("dbus", .ok, "the system bus answers at \(path)")
        case ENOENT:
            return DoctorCheck("dbus", .fail, "no system bus at \(path) (avahi-daemon needs it)",
                               fix: "sudo apt-get install dbus; sudo systemctl start dbus")
        case let code:
            return DoctorCheck("dbus", .fail, "cannot connect to the system bus at \(path): \(SystemError(call: "connect", errno: code).reason)",
                               fix: "sudo systemctl restart dbus")
        }
    }

    package func avahi() -> DoctorCheck {
        let pid = Self.readPid(options.avahiPidFile)
        let alive = pid.map { kill($0, 0) == 0 || errno == EPERM } ?? false
        let answered: Bool
        var why = ""
        do throws(DiscoveryError) {
            guard let session = try? SessionID("AnalogRemote") else { return DoctorCheck("avahi", .skip, "no session ID") }
            let browser = try SessionBrowser(session: session) { _ in }
            browser.stop()
            answered = true
        } catch {
            answered = false
            why = "\(error)"
        }
        switch (alive, answered) {
        case (_, true):
            return DoctorCheck("avahi", .ok, "avahi-daemon\(pid.map { " (pid \($0))" } ?? "") answers DNS-SD requests")
        case (true, false):
            return DoctorCheck("avahi", .fail, "avahi-daemon runs (pid \(pid ?? 0)) but does not answer over D-Bus: \(why)",
                               fix: "sudo systemctl restart dbus avahi-daemon")
        case (false, false):
            return DoctorCheck("avahi", .fail, "no mDNS responder is running: receivers are not announced and `control --session` finds nothing",
                               fix: "sudo apt-get install avahi-daemon; sudo systemctl enable --now avahi-daemon (or run without it: receive --no-advertise, control --peer HOST:PORT)")
        }
    }

    // MARK: Groups

    package func groups() -> DoctorCheck {
        let me = Self.userName(getuid()) ?? "uid \(getuid())"
        var problems: [String] = []
        var fixes: [String] = []
        var good: [String] = []
        if getuid() == 0 {
            good.append("root may open every device")
        } else {
            let mine = Self.processGroups()
            let missing = options.groups.filter { !mine.contains($0) }
            if missing.isEmpty {
                good.append("\(me) is in \(options.groups.joined(separator: ", "))")
            } else {
                problems.append("\(me) is not in \(missing.joined(separator: ", "))")
                fixes.append("sudo usermod -aG \(missing.joined(separator: ",")) \(me), then log in again")
            }
        }
        if getpwnam(options.serviceUser) != nil {
            let missing = options.groups.filter { !Self.members(of: $0).contains(options.serviceUser) && Self.primaryGroup(of: options.serviceUser) != $0 }
            if missing.isEmpty {
                good.append("the service user \(options.serviceUser) is in \(options.groups.joined(separator: ", "))")
            } else {
                problems.append("the service user \(options.serviceUser) is not in \(missing.joined(separator: ", "))")
                fixes.append("sudo usermod -aG \(missing.joined(separator: ",")) \(options.serviceUser); sudo systemctl restart analog-remote")
            }
        }
        if problems.isEmpty { return DoctorCheck("groups", .ok, good.joined(separator: "; ")) }
        return DoctorCheck("groups", .fail, problems.joined(separator: "; ") + " (serial boards need dialout, MIDI boards audio)",
                           fix: fixes.joined(separator: "; "))
    }

    // MARK: Boards

    package func boards() -> [DoctorCheck] {
        let serial = SerialDevices.list(devDirectory: options.devDirectory)
        if serial.isEmpty {
            return [DoctorCheck("boards", .warn, "no serial board (\(options.devDirectory)/ttyACM*, ttyUSB*) is attached",
                                fix: "plug the board in with a data USB cable; `sudo dmesg | tail` shows what the kernel saw; `analog-remote boards` lists MIDI boards too")]
        }
        var out: [DoctorCheck] = []
        for device in serial {
            let names = StableNames.links(to: device.path, in: options.devDirectory)
            let label = ([device.path] + names.map { "= \($0)" } + [device.usbID, device.product].compactMap { $0 }).joined(separator: " ")
            let isKit = device.usbID.map(KitUSB.ids.contains) ?? false
            var check: DoctorCheck
            if options.probeBoards {
                check = probe(device.path, label: label)
            } else {
                check = DoctorCheck("boards", .ok, "\(label) (not probed)")
            }
            if check.verdict == .ok && isKit && names.isEmpty {
                check = DoctorCheck("boards", .warn, check.detail + "; no stable name /dev/programland",
                                    fix: "install the udev rule (scripts/install.sh or the .deb does it): then `serial:/dev/programland` survives replugging")
            }
            out.append(check)
        }
        return out
    }

    func probe(_ path: String, label: String) -> DoctorCheck {
        do throws(BoardLinkError) {
            let client = try BoardClient(spec: .serial(path: path, baud: BaudRate.default))
            defer { client.close() }
            let identity = try client.probe()
            guard identity.profile != nil else {
                return DoctorCheck("boards", .fail, "\(label) answers but its firmware is unknown: \(identity)",
                                   fix: "flash the kit's firmware (the published one, or the motors build)")
            }
            return DoctorCheck("boards", .ok, "\(label) answers: \(identity); use --board serial:\(path)")
        } catch {
            switch error.kind {
            case .deviceUnavailable:
                return DoctorCheck("boards", .fail, "\(label) cannot be opened: \(error.message)",
                                   fix: "check the groups line above; if the receiver service holds it, `systemctl stop analog-remote` first or run doctor with --no-probe")
            default:
                return DoctorCheck("boards", .fail, "\(label) does not answer like the kit: \(error.message)",
                                   fix: "flash the kit's firmware; unplug and replug; ModemManager may hold a fresh ttyACM for a few seconds")
            }
        }
    }

    // MARK: The service

    /// The receiver service's state, restarts and how its last run ended (`systemctl show` and
    /// systemd's exit records in the journal); skipped where systemd does not run.
    package func service() -> DoctorCheck {
        guard access("/run/systemd/system", F_OK) == 0, let systemctl = Self.executable("systemctl") else {
            return DoctorCheck("service", .skip, "systemd is not running here (the receiver is started by hand)")
        }
        guard let show = Self.output(of: systemctl, ["show", options.serviceUnit, "--property=\(ServiceState.properties)"]) else {
            return DoctorCheck("service", .skip, "systemctl cannot tell the state of \(options.serviceUnit) to this user",
                               fix: "sudo analog-remote doctor")
        }
        let journal = Self.executable("journalctl").flatMap {
            Self.output(of: $0, ["--unit", options.serviceUnit, "--output=json", "--output-fields=\(ServiceState.journalFields)",
                                 "--lines=200", "--no-pager", "--quiet"])
        }
        let state = ServiceState(unit: options.serviceUnit, show: show,
                                 journalExit: journal.flatMap { ServiceState.lastExit(journalJSON: $0) })
        return state.check
    }

    // MARK: Network

    package func port() -> DoctorCheck {
        let port = options.port
        do {
            let socket = try UDPSocket.bind(port: port)
            socket.close()
            return DoctorCheck("port", .ok, "udp port \(port) is free")
        } catch {
            if error.errno == EADDRINUSE {
                return DoctorCheck("port", .warn, "udp port \(port) is in use: by the receiver service if it runs, else by another program",
                                   fix: "systemctl status analog-remote; `ss -ulpn 'sport = :\(port)'` names the program; or choose another --port")
            }
            return DoctorCheck("port", .fail, "cannot bind udp port \(port): \(error.reason)",
                               fix: port < 1024 ? "use a port of 1024 or above" : "check the machine's IPv6/IPv4 set-up")
        }
    }

    package func multicast() -> DoctorCheck {
        let interfaces = NetworkInterfaces.list().filter { !$0.loopback && $0.up }
        if interfaces.isEmpty {
            return DoctorCheck("multicast", .fail, "no network interface is up besides loopback: controllers cannot reach this machine",
                               fix: "connect to the LAN (cable or Wi-Fi) and check `ip addr`")
        }
        let capable = interfaces.filter { $0.multicast && $0.hasAddress }
        let without = interfaces.filter { !$0.multicast }
        let names = capable.map(\.name).joined(separator: ", ")
        if capable.isEmpty {
            return DoctorCheck("multicast", .fail, "no interface that is up has multicast and an address (\(interfaces.map(\.name).joined(separator: ", "))): mDNS cannot work",
                               fix: "sudo ip link set DEV multicast on, and give it an address (DHCP)")
        }
        if !without.isEmpty {
            return DoctorCheck("multicast", .warn, "mDNS works on \(names); multicast is off on \(without.map(\.name).joined(separator: ", "))",
                               fix: "sudo ip link set \(without[0].name) multicast on (if controllers are on that network)")
        }
        return DoctorCheck("multicast", .ok, "multicast is on for \(names)")
    }

    package func firewall() -> DoctorCheck {
        let ports: [UInt16] = [5353, options.port]
        var findings: [FirewallRules.Finding] = []
        var read: [String] = []
        var unreadable: [String] = []
        if let tool = Self.executable("nft") {
            if let text = Self.output(of: tool, ["list", "ruleset"]) {
                read.append("nft")
                findings += FirewallRules.findings(nft: text, ports: ports)
            } else {
                unreadable.append("nft")
            }
        }
        for name in ["iptables-save", "ip6tables-save"] {
            guard let tool = Self.executable(name) else { continue }
            if let text = Self.output(of: tool, []) {
                read.append(name)
                findings += FirewallRules.findings(iptables: text, ports: ports)
            } else {
                unreadable.append(name)
            }
        }
        if let first = findings.first {
            let which = Set(findings.map(\.port)).sorted().map { $0 == 5353 ? "mDNS (5353/udp)" : "udp port \($0)" }
            return DoctorCheck("firewall", .fail, "the firewall may drop \(which.joined(separator: " and ")): \(first.rule)",
                               fix: "allow them in, e.g. nft add rule inet filter input udp dport { 5353, \(options.port) } accept")
        }
        if read.isEmpty && !unreadable.isEmpty {
            return DoctorCheck("firewall", .skip, "the rules cannot be read without root (\(unreadable.joined(separator: ", ")))",
                               fix: "sudo analog-remote doctor")
        }
        if read.isEmpty {
            return DoctorCheck("firewall", .ok, "no firewall tool (nft, iptables) is installed")
        }
        return DoctorCheck("firewall", .ok, "no rule drops mDNS (5353/udp) or udp port \(options.port) (\(read.joined(separator: ", ")))")
    }
}
