#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Controller
import Discovery
import Foundation
import Hummingbird
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import PhoneLink
import RemoteWire
import Synchronization
import TerminalQR
import SystemIO

/// What `analog-remote web` was asked to do (parsed and validated by the CLI).
package struct WebOptions: Sendable {
    package enum Robots: Sendable {
        /// `--peer HOST:PORT`, repeatable: a fixed list (label as typed, resolved address), in
        /// ``WebOptions/session`` when `--session` is given too (no DNS-SD either way).
        case peers([(label: String, address: SystemIO.SocketAddress)])
        /// `--session ID`: the session's receivers, live, from DNS-SD.
        case session(SessionID)
    }

    package enum Security: Sendable {
        /// The self-signed certificate in this directory (made on first start).
        case selfSigned(directory: String)
        /// `--tls-cert FILE --tls-key FILE`.
        case files(certificate: String, key: String)
        /// `--plain-http`: no TLS (browsers then give no DeviceOrientation: laptops with keys only).
        case plainHTTP
    }

    package var robots: Robots
    package var security: Security
    package var host: String
    package var port: Int
    /// The session ID the hellos, the dashboard's commands and the name queries carry (empty with
    /// `--peer` alone: the receivers' default session for commands, none checked for hellos).
    package var session: String
    package var rate: Double
    package var timing: PhoneSource.Timing
    package var limits: PhoneHub.Limits
    /// Print the URL as a QR code on stderr.
    package var qrCode: Bool
    /// `--allow-origin`: pages of these origins may open the WebSocket too (``OriginPolicy``).
    package var allowedOrigins: Set<OriginPolicy.Origin> = []
    /// `--teacher-key-file`: serve `/teacher`, the teacher's dashboard (TeacherRoutes.swift).
    package var teacherKeyFile: String?
    /// `--log-dir`: the lesson's log as JSON Lines (TeacherLog.swift).
    package var logDirectory: String?
    /// `--roster`: student → robot: each phone sees and drives only its student's robot, and
    /// the dashboard shows who is missing (Roster.swift).
    package var rosterFile: String?
    /// `--record-dir`: record every phone's drive there, one file each.
    package var recordDirectory: String?
    /// The caps of `--record-dir` (files per driver per minute, bytes in the directory).
    package var recordQuota = RecordingQuota()
    /// Told (on the dashboard's thread) the session and every robot that has proven the teacher
    /// key — where its signed reply came from and the robot id it named — whenever that set
    /// changes: `stop-all` on this machine sends to them first (the CLI keeps them for it).
    package var provenRobots: (@Sendable (String, [(address: SystemIO.SocketAddress, robot: RobotID?)]) -> Void)?

    package init(robots: Robots, security: Security, host: String = "0.0.0.0", port: Int = 8443, session: String = "",
                rate: Double = 50, timing: PhoneSource.Timing = .init(), limits: PhoneHub.Limits = .init(), qrCode: Bool = true) {
        self.robots = robots
        self.security = security
        self.host = host
        self.port = port
        self.session = session
        self.rate = rate
        self.timing = timing
        self.limits = limits
        self.qrCode = qrCode
    }
}

/// `analog-remote web`: serve the phone page; each page that picks a robot becomes one
/// controller (``PhoneController``). Runs until SIGINT/SIGTERM; then every phone's controller
/// sends neutral ×3 and bye before the server stops.
package enum WebCommand {
    package static func run(_ options: WebOptions, status: StatusLine) throws -> CommandOutcome {
        _ = WebServer.tasksRunOnEventLoops
        let logger = Logger(label: "web")
        _ = signal(SIGPIPE, SIG_IGN)
        let runner: LoopRunner<Never>
        do {
            runner = try LoopRunner(stopOn: StopSignals.standard)
        } catch {
            throw CommandFailure("web: cannot watch signals: \(error)", kind: .failed)
        }
        raiseDescriptorLimit()

        let tls: TLSConfiguration?
        var fingerprint: String?
        switch options.security {
        case .plainHTTP:
            tls = nil
        case .selfSigned(let directory):
            let cert: WebCertificate
            do {
                cert = try WebCertificate.selfSigned(directory: directory, hostNames: [HostName.current() ?? ""].map { $0 + ".local" })
            } catch {
                throw CommandFailure("web: \(error)", kind: .badConfiguration)
            }
            if cert.created { logger.notice("made a self-signed certificate: \(cert.origin)") }
            tls = try serverConfiguration(cert)
            fingerprint = cert.fingerprint
        case .files(let certificate, let key):
            let cert: WebCertificate
            do {
                cert = try WebCertificate.load(certificate: certificate, key: key)
            } catch {
                throw CommandFailure("web: \(error)", kind: .badConfiguration)
            }
            tls = try serverConfiguration(cert)
            fingerprint = cert.fingerprint
        }

        var settings = PhoneHub.Settings(session: options.session, rate: options.rate, timing: options.timing, limits: options.limits)
        if let directory = options.recordDirectory {
            do {
                settings.recordings = try PhoneRecordings(path: directory, quota: options.recordQuota)
            } catch {
                throw CommandFailure("web: --record-dir \(error)", kind: .badConfiguration)
            }
        }
        var roster: Roster?
        if let file = options.rosterFile {
            do {
                roster = try Roster.load(file)
            } catch {
                throw CommandFailure("web: \(error)", kind: .badConfiguration)
            }
            settings.roster = roster?.filter
        }
        let hub = PhoneHub(settings: settings, logger: logger)
        let teacher = try TeacherSetup.dashboard(options, hub: hub, roster: roster, logger: logger)
        defer { teacher?.game.stop(); teacher?.robotGame.stop(); teacher?.link.stop() }
        var sessionRobots: SessionRobots?
        var peerNames: PeerNames?
        switch options.robots {
        case .peers(let peers):
            let robots = peers.enumerated().map { i, p in
                PhoneHub.Robot(id: "p\(i + 1)", name: p.label, peer: Destination.Peer(address: p.address, label: p.label))
            }
            hub.setRobots(robots)
            // Until a receiver names itself, its robot is listed as typed (HOST:PORT); with a
            // teacher key, only a reply signed with it names a robot.
            peerNames = try? PeerNames(robots: robots, session: options.session.isEmpty ? "AnalogRemote" : options.session,
                                       hub: hub, teacherKey: teacher?.link.macKey, logger: logger)
        case .session(let id):
            sessionRobots = try SessionRobots(session: id, hub: hub, logger: logger)
        }
        defer { sessionRobots?.stop(); peerNames?.stop() }

        let server = try WebServer(hub: hub, tls: tls, host: options.host, port: options.port,
                                   allowedOrigins: options.allowedOrigins, logger: logger, teacher: teacher)
        let port: Int
        do {
            port = try server.start()
        } catch {
            throw CommandFailure("web: cannot serve on \(options.host):\(options.port): \(error) (is the port taken? try --port 0)",
                                 kind: .networkUnavailable)
        }
        let scheme = tls == nil ? "http" : "https"
        StandardOutput.write("serving \(scheme) on tcp port \(port)\n")
        let urls = LocalAddresses.listening(on: options.host).map { "\(scheme)://\($0):\(port)/" }
        for url in urls { StandardOutput.write("url \(url)\n") }
        if let fingerprint { StandardOutput.write("certificate sha256 \(fingerprint)\n") }
        if options.qrCode, status.enabled, let first = urls.first {
            status.printAbove("scan to open \(first):\n" + TerminalQR.render(first))
        }

        // Wait for a signal or the server's end; with a status line (a terminal), redraw it once
        // a second — without one, this thread sleeps until the end.
        var redraw: Tick? = status.enabled ? Tick.now() : nil
        while runner.stop == nil, !server.hasEnded {
            guard let wake = try? runner.wait([(server.ended.descriptor.rawValue, .readable)], until: redraw) else { break }
            guard wake.deadlinePassed else { continue }
            let (pages, drivers) = hub.counts
            status.update("web: \(pages) page\(pages == 1 ? "" : "s") open · \(drivers) driving · \(hub.robots.count) robot\(hub.robots.count == 1 ? "" : "s")")
            redraw = wake.now + 1_000_000_000
        }
        // Each controller sees the signal itself; this waits for their neutral packets and byes.
        hub.stopAll(timeout: .seconds(2))
        server.stop()
        status.clear()
        if let failure = server.failure {
            throw CommandFailure("web: the server stopped: \(failure)", kind: .failed)
        }
        return .done
    }

    static func serverConfiguration(_ cert: WebCertificate) throws -> TLSConfiguration {
        do {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(cert.certificatePEM.utf8))
            let key = try NIOSSLPrivateKey(bytes: Array(cert.privateKeyPEM.utf8), format: .pem)
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        } catch {
            throw CommandFailure("web: \(cert.origin): cannot use the certificate or key: \(error)", kind: .badConfiguration)
        }
    }

    /// 200 phones need ~1000 descriptors (socket, eventfds): lift the soft limit to the hard one.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// The host's IPv4 addresses, for the URLs phones open.
enum LocalAddresses {
    /// The addresses a server listening on `host` answers on: every interface's (loopback last
    /// resort) for `0.0.0.0`, else `host` alone.
    static func listening(on host: String) -> [String] {
        host == "0.0.0.0" ? ipv4(includingLoopback: false) : [host]
    }

    static func ipv4(includingLoopback: Bool) -> [String] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return ["127.0.0.1"] }
        defer { freeifaddrs(head) }
        var out: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0 else { continue }
            if flags & Int32(IFF_LOOPBACK) != 0 && !includingLoopback { continue }
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var addr = sin.pointee.sin_addr
                _ = inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
            }
            out.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return out.isEmpty ? ["127.0.0.1"] : out
    }
}
