import ControlPlane
import Foundation
import Game
import Logging
import Synchronization
import SystemIO

/// The button game, run from the dashboard: `analog-remote game`'s ``GameHost`` (the same rules,
/// scores and `game-score` messages) on a UDP port of the web server. The port is bound at the
/// first Start and kept for the server's life, so students point their controllers at one port
/// for the whole lesson (`control --peer HOST:PORT --name NAME`); each Start is a new game of
/// one round, played until End. The standings are pushed with the dashboard's rows, and each
/// End writes a `game-result` event to the lesson's log.
///
/// One thread, started with the first round, on a ``LoopRunner``: it waits for the socket, the
/// dashboard's mailbox or the host's next deadline (none between rounds). Between rounds
/// whatever players send is read and dropped. Every change of the standings is told to
/// `changed` (the dashboards push it).
final class TeacherGame: Sendable {
    /// What the dashboard shows.
    struct Board: Sendable, Equatable {
        struct Row: Sendable, Equatable {
            var rank: Int
            var name: String
            var points: Int
        }

        var playing = false
        /// The UDP port players send to (nil before the first Start).
        var port: Int?
        /// Rounds started in this lesson.
        var round = 0
        var standings: [Row] = []
        /// The bind failure, if the port could not be had.
        var problem: String?
        /// A refused Start (the robots' round plays), shown until the next Start.
        var notice: String?
    }

    enum Action: Sendable { case start, end, quit }

    private let board = Mutex(Board())
    private let runner: LoopRunner<Action>
    private let thread: LoopThread
    private let host: String
    private let name: String
    private let session: String
    private let events: TeacherLog
    private let logger: Logger
    private let changed: @Sendable () -> Void
    /// One game at a time (the robots' round shares it).
    private let floor: GameFloor

    /// `host`: the address the web server listens on (the game listens there too).
    convenience init(host: String, name: String, session: String, events: TeacherLog, logger: Logger,
                     floor: GameFloor = GameFloor(), changed: @escaping @Sendable () -> Void = {}) throws {
        // Trap: the throwing calls stay out of the designated init. Swift 6.3.1's optimiser
        // crashes (ownership verifier, CopyPropagation) on the clean-up of `started`, an Atomic,
        // when a designated init inlined into its caller throws after it was set up.
        let runner = try LoopRunner<Action>(stopOn: StopSignals.none, mailboxCapacity: 16)
        let thread = try LoopThread(name: "teacher-game")
        self.init(runner: runner, thread: thread, host: host, name: name, session: session, events: events, logger: logger,
                  floor: floor, changed: changed)
    }

    private init(runner: LoopRunner<Action>, thread: LoopThread, host: String, name: String, session: String,
                 events: TeacherLog, logger: Logger, floor: GameFloor, changed: @escaping @Sendable () -> Void) {
        self.runner = runner
        self.floor = floor
        self.changed = changed
        self.thread = thread
        self.host = host == "0.0.0.0" ? "" : host
        self.name = name
        self.session = session
        self.events = events
        self.logger = logger
    }

    var snapshot: Board { board.withLock { $0 } }

    /// Starts a round (a Start while one plays changes nothing); refused, with the reason as
    /// ``Board/notice``, while the robots' round plays.
    @discardableResult
    func start() -> Bool {
        if let other = floor.take(.button) {
            let text = GameFloor.refusal(.button, busy: other)
            let moved = board.withLock { b -> Bool in defer { b.notice = text }; return b.notice != text }
            if moved { changed() }
            return false
        }
        // Its port could not be had: no round will start (the dashboard shows the problem).
        if board.withLock({ $0.problem != nil }) { floor.release(.button); return false }
        thread.start { [self] in run() }
        runner.mailbox.post(.start)
        return true
    }

    func end() { runner.mailbox.post(.end) }

    /// Ends a round in play (its result is logged) and the thread. Waits up to 2 s.
    func stop() {
        guard thread.hasStarted else { return }
        runner.mailbox.post(.quit)
        thread.wait(timeout: .seconds(2))
    }

    private func run() {
        let socket: UDPSocket
        do {
            socket = try UDPSocket.bind(port: 0, host: host)
            let port = Int(try socket.localAddress().port)
            board.withLock { $0.port = port }
            changed()
            logger.notice("the button game listens on udp port \(port)")
        } catch {
            floor.release(.button)
            board.withLock { $0.problem = "cannot open the game's UDP port: \(error)" }
            changed()
            return
        }
        defer { socket.close() }
        var game: GameHost<SocketAddress>?
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            let deadline = game?.deadline(now: .now)
            guard let wake = try? runner.wait([(socket.descriptor.rawValue, .readable)], untilInstant: deadline) else { return }
            let ready = wake.ready
            var quit = false
            for action in wake.events {
                switch action {
                case .start where game == nil:
                    // Whatever came between rounds is not part of this one.
                    while (try? socket.receive(into: &buffer)) != nil {}
                    game = newGame()
                case .end, .quit:
                    if var g = game {
                        finish(&g, on: socket)
                        game = nil
                    }
                    floor.release(.button)
                    if action == .quit { quit = true }
                default:
                    break
                }
            }
            if quit { return }
            if ready.first.map({ !$0.isEmpty }) ?? false {
                for _ in 0..<256 {
                    guard let (length, from) = try? socket.receive(into: &buffer) else { break }
                    guard var g = game else { continue }
                    transmit(g.datagram(Array(buffer[..<min(length, buffer.count)]), length: length, from: from, now: .now), on: socket)
                    game = g
                }
            }
            if var g = game {
                transmit(g.tick(now: .now), on: socket)
                game = g
                publish(g, playing: true)
            }
        }
    }

    private func newGame() -> GameHost<SocketAddress> {
        let settings = GameSettings(name: name, session: session, rounds: 1, roundLength: nil, peerID: .random(in: 1...UInt64.max))
        let game = GameHost<SocketAddress>(settings: settings, connection: .random(in: 1...UInt32.max), now: .now)
        let round = board.withLock { b -> Int in
            b.round += 1
            b.playing = true
            b.standings = []
            b.notice = nil
            return b.round
        }
        changed()
        events.record(robot: "", event: "game-start", detail: "round \(round) on udp port \(snapshot.port ?? 0)")
        return game
    }

    /// No more points; the final scores go out (waiting up to 1 s for them to be acknowledged);
    /// the standings go to the dashboard and the log.
    private func finish(_ game: inout GameHost<SocketAddress>, on socket: UDPSocket) {
        transmit(game.finish(now: .now), on: socket)
        let lingerEnd = ContinuousClock.now + .seconds(1)
        var buffer = [UInt8](repeating: 0, count: 2048)
        while game.peers.backlog > 0 && ContinuousClock.now < lingerEnd {
            _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable,
                                 timeout: max(.zero, min(lingerEnd, game.deadline(now: .now) ?? lingerEnd) - .now))
            while let (length, from) = try? socket.receive(into: &buffer) {
                transmit(game.datagram(Array(buffer[..<min(length, buffer.count)]), length: length, from: from, now: .now), on: socket)
            }
            transmit(game.tick(now: .now), on: socket)
        }
        publish(game, playing: false)
        let b = snapshot
        events.record(robot: "", event: "game-result", detail: Self.result(b))
        logger.notice("game round \(b.round) over: \(Self.result(b))")
    }

    /// `round 2, 3 players: 1. Eve 5; 2. Ann 3; 2. Ben 3`
    static func result(_ b: Board) -> String {
        let rows = b.standings.map { "\($0.rank). \($0.name) \($0.points)" }.joined(separator: "; ")
        return "round \(b.round), \(b.standings.count) player\(b.standings.count == 1 ? "" : "s")" + (rows.isEmpty ? "" : ": " + rows)
    }

    private func publish(_ game: GameHost<SocketAddress>, playing: Bool) {
        let rows = game.game.standings.map { Board.Row(rank: $0.rank, name: $0.player.name, points: $0.player.points) }
        let moved = board.withLock { b -> Bool in
            let moved = b.playing != playing || b.standings != rows
            b.playing = playing
            if b.standings != rows { b.standings = rows }
            return moved
        }
        if moved { changed() }
    }

    private func transmit(_ output: GameHost<SocketAddress>.Output, on socket: UDPSocket) {
        for (to, datagram) in output.datagrams { _ = try? socket.send(datagram, to: to) }
    }
}
