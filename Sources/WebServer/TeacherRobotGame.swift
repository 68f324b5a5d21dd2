import ControlWire
import Foundation
import Game
import Logging
import Synchronization
import SystemIO

/// The robots' round, run from the dashboard (``TeacherRobotRound`` holds the rules and the
/// standings): Start takes the robots that have proven who they are, End (or the round deciding
/// itself: no robot still playing) writes `game-result` to the lesson's log. Its input is only
/// what ``TeacherLink`` took: ``report(_:at:)`` is called by the link for a verified report, at
/// the time it took it. One round at a time, and not while the button game plays (``GameFloor``).
///
/// One thread, started with the first round, on a ``LoopRunner``: it waits for its mailbox
/// (Start, End, the taken reports) or the round's next deadline (a robot's silence limit, a
/// hold's end); between rounds it sleeps. Every change of what the dashboard shows is told to
/// `changed`.
final class TeacherRobotGame: Sendable {
    typealias Board = TeacherRobotRound.Board

    enum Action: Sendable {
        case start(TeacherRobotRound)
        case report(WatchReport, at: ContinuousClock.Instant)
        case end, quit
    }

    private let board = Mutex(Board())
    /// Rounds started (the number of the next is one more).
    private let rounds = Mutex(0)
    /// Set at Start (before the thread has it), cleared when the round is over: the link posts
    /// reports only meanwhile.
    private let active = Atomic<Bool>(false)
    private let runner: LoopRunner<Action>
    private let thread: LoopThread
    private let floor: GameFloor
    private let events: TeacherLog
    private let logger: Logger
    private let changed: @Sendable () -> Void

    convenience init(floor: GameFloor, events: TeacherLog, logger: Logger, changed: @escaping @Sendable () -> Void = {}) throws {
        // The throwing calls stay out of the designated init (see TeacherGame's init).
        let runner = try LoopRunner<Action>(stopOn: StopSignals.none, mailboxCapacity: 1024)
        let thread = try LoopThread(name: "teacher-robot-game")
        self.init(runner: runner, thread: thread, floor: floor, events: events, logger: logger, changed: changed)
    }

    private init(runner: LoopRunner<Action>, thread: LoopThread, floor: GameFloor, events: TeacherLog, logger: Logger,
                 changed: @escaping @Sendable () -> Void) {
        self.runner = runner
        self.thread = thread
        self.floor = floor
        self.events = events
        self.logger = logger
        self.changed = changed
    }

    var snapshot: Board { board.withLock { $0 } }

    var isPlaying: Bool { active.load(ordering: .acquiring) }

    /// Shows `text` as the round's notice (a refused command) until the next Start.
    func refuse(_ text: String) {
        let moved = board.withLock { b -> Bool in
            defer { b.notice = text }
            return b.notice != text
        }
        if moved { changed() }
    }

    /// Starts a round of `rule` for `entrants` (from ``TeacherRobotRound/entrants(_:)``); refused
    /// (shown as the notice, nothing logged) while a round plays, while the button game plays,
    /// or with no robot to play. `leftOut`: robots shown but not playing (no sensors).
    @discardableResult
    func start(_ rule: RobotRound.Rule, entrants: [TeacherRobotRound.Entrant], leftOut: [String] = []) -> Bool {
        if isPlaying { refuse("not started: a robots' round is playing; end it first"); return false }
        guard !entrants.isEmpty else {
            refuse("not started: no robot can play (none has sent the dashboard a signed report with its sensors)"
                   + (leftOut.isEmpty ? "" : "; reading no sensors: " + leftOut.joined(separator: ", ")))
            return false
        }
        if let other = floor.take(.robots) { refuse(GameFloor.refusal(.robots, busy: other)); return false }
        guard !active.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let number = rounds.withLock { $0 += 1; return $0 }
        let now = ContinuousClock.now
        let round = TeacherRobotRound(number: number, rule: rule, entrants: entrants, now: now)
        board.withLock {
            $0.playing = true
            $0.round = round.board(playing: true)
            $0.notice = leftOut.isEmpty ? nil : "not playing (reading no sensors): " + leftOut.joined(separator: ", ")
        }
        changed()
        events.record(robot: "", event: "game-start", detail: round.startText)
        thread.start { [self] in run() }
        runner.mailbox.post(.start(round))
        return true
    }

    func end() { if isPlaying { runner.mailbox.post(.end) } }

    /// A watch report ``TeacherLink`` took (verified, its own watch, newer than the last), at
    /// the time it took it. Any thread; dropped between rounds.
    func report(_ report: WatchReport, at: ContinuousClock.Instant) {
        guard isPlaying else { return }
        runner.mailbox.post(.report(report, at: at))
    }

    /// Ends a round in play (its result is logged) and the thread. Waits up to 2 s.
    func stop() {
        guard thread.hasStarted else { return }
        runner.mailbox.post(.quit)
        thread.wait(timeout: .seconds(2))
    }

    private func run() {
        var round: TeacherRobotRound?
        while true {
            guard let wake = try? runner.wait(untilInstant: round?.deadline()) else { return }
            var quit = false
            for action in wake.events {
                switch action {
                case .start(let new):
                    round = new
                case .report(let report, let at):
                    round?.report(report, now: at)
                case .end, .quit:
                    if var r = round {
                        r.end(now: .now)
                        finish(r)
                        round = nil
                    }
                    if action.isQuit { quit = true }
                }
            }
            if quit { return }
            guard var r = round else { continue }
            r.tick(now: .now)
            if r.isOver {
                finish(r)
                round = nil
            } else {
                round = r
                publish(r.board(playing: true), playing: true)
            }
        }
    }

    /// The round is over: the standings to the dashboard and the log, the floor free.
    private func finish(_ round: TeacherRobotRound) {
        publish(round.board(playing: false), playing: false)
        events.record(robot: "", event: "game-result", detail: round.resultText)
        logger.notice("robot round \(round.number) over: \(round.resultText)")
        active.store(false, ordering: .releasing)
        floor.release(.robots)
        changed()
    }

    private func publish(_ round: Board.Round, playing: Bool) {
        let moved = board.withLock { b -> Bool in
            guard b.round != round || b.playing != playing else { return false }
            b.round = round
            b.playing = playing
            return true
        }
        if moved { changed() }
    }
}

extension TeacherRobotGame.Action {
    var isQuit: Bool { if case .quit = self { true } else { false } }
}
