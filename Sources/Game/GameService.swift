#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlPlane
import Console
import Discovery
import Logging
import RemoteWire
import SystemIO

/// What `analog-remote game` was asked to do (the CLI validates, this only carries).
package struct GameConfiguration: Sendable {
    package var port: UInt16 = 0
    package var session: String
    /// The name announced in the session and sent in `accept`.
    package var name: String
    package var advertise = true
    package var rounds = 1
    /// Length of each round; nil = one round until SIGINT/SIGTERM.
    package var roundLength: Duration?
    /// Where the results files go.
    package var resultsDirectory = "."
    /// How long the end waits for the final scores to be acknowledged.
    package var linger: Duration = .seconds(2)

    package init(session: String, name: String) {
        self.session = session
        self.name = name
    }
}

/// `analog-remote game`: hosts the button game (``GameHost``) on a UDP port, announced in the
/// session like a receiver. One thread, one `poll` over the socket, the signal pipe and the
/// advertiser's mailbox, with the host's next deadline as the timeout.
///
/// stdout: `receiving on udp port N` first; then `joined "NAME" ADDRESS`, `renamed …`,
/// `left "NAME"`, `round N of M` / `round N over`; at the end the standings
/// (`RANK. NAME POINTS`) and `wrote PATH` for the two results files. stderr: the live
/// scoreboard on a terminal, and log lines.
package final class GameService {
    private let configuration: GameConfiguration
    private let socket: UDPSocket
    private let runner: LoopRunner<AdvertiserEvent>
    private let status: StatusLine
    private let logger: Logger
    private var host: GameHost<SocketAddress>
    private let started: ContinuousClock.Instant
    private let startedWall: timespec

    /// What every round checks before it starts (the button game's and the robot-judged): the
    /// results directory takes files now (they are written at the end), and the stop signals
    /// are watched. Returns the round's loop runner.
    static func prepare<Event: Sendable>(resultsDirectory: String) throws(CommandFailure) -> LoopRunner<Event> {
        guard access(resultsDirectory, W_OK | X_OK) == 0 else {
            throw CommandFailure("--results \(resultsDirectory): \(String(cString: strerror(errno))) (give a writable directory)",
                                 kind: .badConfiguration)
        }
        do {
            return try LoopRunner()
        } catch {
            throw CommandFailure("cannot set up signal handling: \(error)", kind: .failed)
        }
    }

    package init(configuration: GameConfiguration, status: StatusLine, logger: Logger) throws(CommandFailure) {
        self.configuration = configuration
        self.status = status
        self.logger = logger
        runner = try Self.prepare(resultsDirectory: configuration.resultsDirectory)
        do {
            socket = try UDPSocket.bind(port: configuration.port)
        } catch {
            let hint = error.errno == EADDRINUSE ? " (choose another --port, or --port 0 for any free port)" : ""
            throw CommandFailure("\(error)\(hint)", kind: .networkUnavailable)
        }
        started = .now
        startedWall = WallClock.now()
        var settings = GameSettings(name: configuration.name, session: configuration.session, rounds: configuration.rounds,
                                    roundLength: configuration.roundLength, peerID: .random(in: 1...UInt64.max))
        settings.scoreInterval = .milliseconds(100)
        host = GameHost(settings: settings, connection: .random(in: 1...UInt32.max), now: started)
    }

    /// Throws a ``CommandFailure``, or a ``DiscoveryError`` from announcing (the CLI maps it).
    package func run() throws -> CommandOutcome {
        let port: UInt16
        do {
            port = try socket.localAddress().port
        } catch {
            throw CommandFailure("\(error)", kind: .networkUnavailable)
        }
        StandardOutput.write("receiving on udp port \(port)\n")
        var advertiser: SessionAdvertiser?
        if configuration.advertise {
            guard let session = try? SessionID(configuration.session) else {
                throw CommandFailure("--session \"\(configuration.session)\" is not a usable session ID", kind: .badArgument)
            }
            do throws(DiscoveryError) {
                advertiser = try SessionAdvertiser(session: session, name: configuration.name, port: port, onEvent: runner.mailbox.post)
            } catch {
                socket.close()
                throw error
            }
        }
        defer { advertiser?.stop() }
        logger.info("game", metadata: ["session": "\(configuration.session)", "port": "\(port)",
                                      "rounds": "\(configuration.rounds)",
                                      "seconds": "\(configuration.roundLength.map { "\($0.components.seconds)" } ?? "until stopped")"])
        say(configuration.rounds > 1 ? "round 1 of \(configuration.rounds)" : "game on: press A to score")
        do {
            try loop()
        } catch {
            throw CommandFailure("game loop failed: \(error)", kind: .failed)
        }
        return try finish()
    }

    private func loop() throws(SystemError) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var nextStatus = ContinuousClock.now
        while !host.isOver {
            var deadline = host.deadline(now: .now)
            if status.enabled { deadline = deadline.map { min($0, nextStatus) } ?? nextStatus }
            let wake = try runner.wait([(socket.descriptor.rawValue, .readable)], untilInstant: deadline)
            if wake.stop != nil { return }
            for event in wake.events { advertised(event) }
            if !wake.ready[0].isEmpty {
                for _ in 0..<256 {
                    guard let (length, from) = try socket.receive(into: &buffer) else { break }
                    let bytes = Array(buffer[..<min(length, buffer.count)])
                    perform(host.datagram(bytes, length: length, from: from, now: .now))
                }
            }
            let now = ContinuousClock.now
            perform(host.tick(now: now))
            if status.enabled && now >= nextStatus {
                status.update(scoreboard(now: now))
                nextStatus = now + .milliseconds(250)
            }
        }
    }

    /// Final scores out (and acknowledged, within the linger time), standings printed, files written.
    private func finish() throws(CommandFailure) -> CommandOutcome {
        var now = ContinuousClock.now
        perform(host.finish(now: now))
        let lingerEnd = now + configuration.linger
        var buffer = [UInt8](repeating: 0, count: 2048)
        while host.peers.backlog > 0 && now < lingerEnd {
            let wake = min(lingerEnd, host.deadline(now: now) ?? lingerEnd)
            _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: max(.zero, wake - .now))
            while let (length, from) = try? socket.receive(into: &buffer) {
                perform(host.datagram(Array(buffer[..<min(length, buffer.count)]), length: length, from: from, now: .now))
            }
            now = .now
            perform(host.tick(now: now))
        }
        socket.close()
        status.clear()
        let game = host.game
        StandardOutput.write("results: \(game.players.count) player\(game.players.count == 1 ? "" : "s"), "
                             + "\(game.round) round\(game.round == 1 ? "" : "s")\n")
        for row in game.standings {
            StandardOutput.write("\(row.rank). \(row.player.name) \(row.player.points)\n")
        }
        let first = Self.resultsBase(directory: configuration.resultsDirectory, wall: startedWall)
        var base = first
        var n = 2
        while access(base + ".csv", F_OK) == 0 || access(base + ".json", F_OK) == 0 {
            base = "\(first)-\(n)"
            n += 1
        }
        let header: KeyValuePairs<String, String> = ["session": configuration.session, "host": configuration.name,
                                                     "started": Self.iso8601(startedWall)]
        for (ext, text) in [("csv", game.csv()), ("json", game.json(header: header))] {
            let path = base + "." + ext
            do {
                try Self.write(text, to: path)
            } catch {
                throw CommandFailure("cannot write the results: \(error) (check --results DIR)", kind: .failed)
            }
            StandardOutput.write("wrote \(path)\n")
        }
        return .done
    }

    private func perform(_ output: GameHost<SocketAddress>.Output) {
        for (to, datagram) in output.datagrams { _ = try? socket.send(datagram, to: to) }
        for event in output.events {
            switch event {
            case .joined(let name, let source): say("joined \(ConsoleLogHandler.quote(name)) \(source)")
            case .renamed(let from, let to): say("renamed \(ConsoleLogHandler.quote(from)) to \(ConsoleLogHandler.quote(to))")
            case .left(let name): say("left \(ConsoleLogHandler.quote(name))")
            case .full(let source): logger.warning("game full (\(GameRound.maxPlayers) players): \(source) turned away")
            case .roundOver(let n): say("round \(n) over")
            case .roundStarted(let n): say("round \(n) of \(configuration.rounds)")
            case .gameOver, .point: break
            }
        }
    }

    private func advertised(_ event: AdvertiserEvent) {
        switch event {
        case .registered(let name): logger.info("announced in session", metadata: ["name": "\(name)", "session": "\(configuration.session)"])
        case .responderLost(let retry): logger.warning("mDNS responder lost; announcing again in \(retry)")
        case .failed(let error): logger.error("announcing failed: \(error)")
        }
    }

    private func say(_ line: String) {
        status.clear()
        StandardOutput.write(line + "\n")
    }

    /// `round 1/3 · 0:42 left · 32 players · Ann 12 · Bob 10 · Eve 9 …`
    private func scoreboard(now: ContinuousClock.Instant) -> String {
        let game = host.game
        var parts = ["round \(game.round)/\(configuration.rounds)"]
        if case .playing(let ends?) = host.phase {
            let left = max(0, (ends - now).components.seconds)
            parts.append("\(left / 60):\(left % 60 < 10 ? "0" : "")\(left % 60) left")
        }
        parts.append("\(game.players.count) player\(game.players.count == 1 ? "" : "s")")
        parts += game.standings.prefix(8).map { "\($0.player.name) \($0.player.points)" }
        return parts.joined(separator: " · ")
    }

    /// `DIR/PREFIX-YYYYMMDD-HHMMSS` (local time of the start).
    static func resultsBase(directory: String, wall: timespec, prefix: String = "button-game") -> String {
        var t = wall.tv_sec
        var parts = tm()
        localtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y%m%d-%H%M%S", &parts)
        let stamp = String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return "\(dir.isEmpty ? "." : dir)/\(prefix)-\(stamp)"
    }

    static func iso8601(_ wall: timespec) -> String {
        var t = wall.tv_sec
        var parts = tm()
        gmtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes a new file, mode 0644, in a checked directory (``SafeDirectory``): never
    /// overwrites and never follows a link: an existing name is an error.
    static func write(_ text: String, to path: String) throws(SafeFileError) {
        let (directory, name) = SafeDirectory.split(path)
        guard try SafeDirectory(directory, create: false).createOnce(name, with: Array(text.utf8), mode: 0o644) else {
            throw SafeFileError("\(path) exists: a result is never overwritten", errno: EEXIST)
        }
    }
}
