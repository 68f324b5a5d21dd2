#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import ControlPlane
import Discovery
import RemoteWire
import SystemIO

/// What `analog-remote stop-all` was asked to do.
package struct StopAllOptions: Sendable {
    package var session: String
    package var release: Bool
    package var teacherKey: TeacherKey?
    /// `HOST:PORT` each; when given, no mDNS is used.
    package var peers: [String]
    /// How long to browse the session for receivers (without --peer).
    package var timeout: Duration
    /// `--robot`: only these robots (empty: every receiver of the session).
    package var robots: Set<RobotID>
    /// Where the receivers that took the last run of the session are kept (``KnownReceivers``);
    /// nil: neither read nor written.
    package var stateDirectory: String?
    /// Send the stop to every host on the links first (``StopAllMachine/Settings/broadcast``);
    /// `--no-broadcast` turns it off. Never with `peers`, never for a release.
    package var broadcast: Bool

    package init(session: String, release: Bool, teacherKey: TeacherKey?, peers: [String], timeout: Duration, robots: Set<RobotID> = [],
                 stateDirectory: String? = nil, broadcast: Bool = true) {
        self.broadcast = broadcast
        self.session = session
        self.release = release
        self.teacherKey = teacherKey
        self.peers = peers
        self.timeout = timeout
        self.robots = robots
        self.stateDirectory = stateDirectory
    }
}

/// `analog-remote stop-all`: the teacher's stop (or release) for every receiver of a session
/// (Protocol.md §7.6), the loop around ``StopAllMachine``: it owns the sockets, the browse, the
/// signals and the clock, and does what the machine says. Receivers come from the session's
/// DNS-SD browse (for `timeout`) or from `--peer`.
///
/// The stop is the emergency, so nothing comes before its first datagrams that need not: every
/// host on the links gets it by broadcast (each interface's IPv4 broadcast address and IPv6
/// all-nodes, at the default port: every receiver of the session there takes it), and the
/// receivers that took the last run of the session (``KnownReceivers``, in the state
/// directory) get it by unicast, before the browse even starts (starting it is a D-Bus round trip to the
/// responder, and every receiver it lists costs a resolve and an address lookup more), and each
/// one the browse lists gets it as soon as its address is known.
///
/// Prints a line per receiver on stdout as it answers — `stopped "NAME" ADDRESS`,
/// `released …`, `refused by "NAME" ADDRESS: WHY` — then `no answer from …` for the silent ones
/// and `reached N of M receivers`. Exit 0 when every receiver took the command, 1 otherwise.
package enum StopAllCommand {
    package static func run(_ options: StopAllOptions, status: StatusLine) throws -> CommandOutcome {
        do {
            let runner = try LoopRunner<BrowserEvent>()
            let start = ContinuousClock.now
            var peers: [SocketAddress] = []
            var browsed: SessionID?
            var known: [KnownReceivers.Entry] = []
            if options.peers.isEmpty {
                browsed = try SessionID(options.session)
                if let dir = options.stateDirectory {
                    known = KnownReceivers.load(directory: dir, session: options.session).entries
                }
            } else {
                for peer in options.peers {
                    do {
                        peers.append(try SocketAddress.resolve(peer))
                    } catch {
                        throw CommandFailure("--peer \(peer): \(error) (check the name, or give an IP address)", kind: .networkUnavailable)
                    }
                }
            }
            var settings = StopAllMachine<SystemRandomNumberGenerator>.Settings(session: options.session, release: options.release,
                                                                                teacherKey: options.teacherKey, browseFor: options.timeout)
            settings.robots = options.robots
            if options.broadcast, options.peers.isEmpty, !options.release {
                settings.broadcast = LinkBroadcast.destinations(port: ReceiverPort.standard)
            }
            var machine = StopAllMachine(settings: settings, peers: peers, known: known, now: start, wallMillis: WallClock.unixMillis(),
                                         random: SystemRandomNumberGenerator())
            var sockets: [SocketAddress.Family: UDPSocket] = [:]
            defer { for s in sockets.values { s.close() } }
            var result: StopAllMachine<SystemRandomNumberGenerator>.Result?
            func perform(_ actions: [StopAllMachine<SystemRandomNumberGenerator>.Action]) throws {
                for action in actions {
                    switch action {
                    case .send(let datagram, let address):
                        let socket = try sockets[address.family] ?? {
                            let s = try UDPSocket.sender(for: address)
                            if address.family == .inet { try s.allowBroadcast() }
                            sockets[address.family] = s
                            return s
                        }()
                        _ = try? socket.send(datagram, to: address)
                    case .print(let line):
                        status.clear()
                        StandardOutput.write(line + "\n")
                    case .status(let text, let force):
                        status.update(text, force: force)
                    case .finish(let r):
                        result = r
                    }
                }
            }
            var buffer = [UInt8](repeating: 0, count: 2048)
            try perform(machine.opening)
            try perform(machine.tick(now: .now))      // the broadcast and the known receivers' first stops, before any DNS-SD work
            var browser: SessionBrowser?
            var directory: ReceiverDirectory?
            if let session = browsed {
                do throws(DiscoveryError) {
                    browser = try SessionBrowser(session: session, lookups: .once, onEvent: runner.mailbox.post)
                    directory = ReceiverDirectory(session: session)
                } catch {
                    // The broadcast and the known receivers have their stop already: they are
                    // not left with a few datagrams because the responder is gone. Receivers
                    // on other ports cannot be found.
                    guard !known.isEmpty || !settings.broadcast.isEmpty, case .noResponder = error else { throw error }
                    status.clear()
                    let reach = settings.broadcast.isEmpty
                        ? "only the \(known.count) receiver\(known.count == 1 ? "" : "s") known from the last run"
                        : "the receivers that answer the broadcast on port \(ReceiverPort.standard)" + (known.isEmpty ? "" : " and the \(known.count) known from the last run")
                    StandardError.write("analog-remote: \(error); stopping \(reach) (name the others with --peer)\n")
                }
            }
            defer { browser?.stop() }
            while result == nil {
                try perform(machine.tick(now: .now))
                guard result == nil else { break }
                let wake = try runner.wait(sockets.values.map { (fd: $0.descriptor.rawValue, events: Poller.Events.readable) },
                                           untilInstant: machine.nextDeadline)
                if wake.stop != nil {
                    try perform(machine.handle(.interrupted, now: .now, wallMillis: WallClock.unixMillis()))
                    break
                }
                for socket in sockets.values {
                    while let (length, from) = try socket.receive(into: &buffer) {
                        guard length <= buffer.count else { continue }
                        try perform(machine.handle(.datagram(Array(buffer[..<length]), from: from), now: .now,
                                                   wallMillis: WallClock.unixMillis()))
                    }
                }
                if var dir = directory {
                    let now = ContinuousClock.now
                    var found: [StopAllMachine<SystemRandomNumberGenerator>.Receiver] = []
                    for event in wake.events {
                        for change in dir.apply(event, now: now) {
                            switch change {
                            case .available(let r), .updated(let r):
                                guard let address = r.destination else { continue }
                                found.append(.init(label: r.name, identity: r.instance, address: address, robot: r.announcement.robot))
                            default:
                                break
                            }
                        }
                    }
                    directory = dir
                    try perform(machine.handle(.browsed(found), now: now, wallMillis: WallClock.unixMillis()))
                }
            }
            status.clear()
            // The next run's known receivers: those that took this one (a run for some robots
            // only, or one that reached nobody, leaves the file as it was).
            if browsed != nil, options.robots.isEmpty, let dir = options.stateDirectory, case let heard = machine.heard, !heard.isEmpty {
                KnownReceivers(session: options.session, entries: heard).save(directory: dir)
            }
            switch result {
            case .noReceivers where !options.robots.isEmpty:
                let ids = options.robots.map(\.text).sorted().joined(separator: ", ")
                throw CommandFailure("no receiver with robot id \(ids) in session \"\(options.session)\" (browse --session shows each receiver's robot=)",
                                     kind: .failed)
            case .noReceivers:
                throw CommandFailure("no receivers found in session \"\(options.session)\" within \(options.timeout) (are they running and announced in this session?)",
                                     kind: .failed)
            case .everyReceiverTookIt: return .done
            case .notEveryReceiverTookIt, nil: return .incomplete
            }
        } catch let error as SystemError {
            throw CommandFailure("stop-all: \(error)", kind: .networkUnavailable)
        } catch let error as SessionIDError {
            throw CommandFailure("--session: \(error)", kind: .badArgument)
        }
    }
}
