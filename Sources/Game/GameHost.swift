import ControlPlane
import ControlWire
import RemoteWire

/// What `analog-remote game` is asked to host.
package struct GameSettings: Sendable {
    /// The host's display name (in `accept`).
    package var name: String
    /// The session ID; a hello naming another session is denied. Empty = no check.
    package var session: String
    /// Rounds to play, each ``roundLength`` long (1…255).
    package var rounds: Int
    /// nil = the round lasts until ``GameHost/finish(now:)`` (Ctrl-C).
    package var roundLength: Duration?
    /// Scores go back to players at most this often (only when they changed).
    package var scoreInterval: Duration = .milliseconds(100)
    package var peerID: UInt64
    /// The timing contract sent in `accept` (what a receiver would say).
    package var failsafe = FailsafeTimeout.standard
    package var rateHertz = SendRate.standardHz

    package init(name: String, session: String, rounds: Int = 1, roundLength: Duration? = nil, peerID: UInt64) {
        precondition((1...255).contains(rounds), "rounds must be 1…255")
        self.name = name
        self.session = session
        self.rounds = rounds
        self.roundLength = roundLength
        self.peerID = peerID
    }
}

/// The button game host as a value type (seed 004's closing example: everyone presses a button
/// when something happens; the counts are shared afterwards). Feed it datagrams and the time;
/// transmit what it returns.
///
/// - Every source that says `hello` is a player by its display name and gets its own
///   ``GameScore`` back, reliably (data channel 1), whenever its points, rank or the number of
///   players change (at most every ``GameSettings/scoreInterval``), and a final one at the end.
/// - A plain 8-byte sender is a player too, named by its address (renamed if it says hello later).
/// - A point is a press of A: the A bit going from released to held (``GameRound/button(_:player:)``).
/// - At most ``GameRound/maxPlayers``; a hello beyond is denied, a plain sender ignored.
package struct GameHost<Source: Hashable & Sendable & CustomStringConvertible>: Sendable {
    package enum Event: Hashable, Sendable {
        case joined(name: String, source: Source)
        case renamed(from: String, to: String)
        /// A hello while the game is full (reported once per source).
        case full(Source)
        case point(player: Int)
        case left(name: String)
        case roundStarted(Int)
        case roundOver(Int)
        case gameOver
    }

    package struct Output: Sendable {
        package var datagrams: [(Source, [UInt8])] = []
        package var events: [Event] = []
        package init() {}
    }

    package enum Phase: Hashable, Sendable {
        case playing(roundEnds: ContinuousClock.Instant?)
        case over
    }

    package let settings: GameSettings
    package private(set) var peers: PeerTable<Source>
    package private(set) var game = GameRound()
    package private(set) var phase: Phase
    var playerOf: [Source: Int] = [:]
    /// Sources that said hello: they get their score back.
    var talking: Set<Source> = []
    var lastSent: [Source: GameScore] = [:]
    var dirty = false
    var nextFlush: ContinuousClock.Instant?
    var toldFull: Set<Source> = []
    /// Valid state packets and refused 8-byte ones.
    package private(set) var states = 0
    package private(set) var bad = 0

    package init(settings: GameSettings, connection: UInt32, now: ContinuousClock.Instant) {
        self.settings = settings
        peers = PeerTable(connection: connection)
        phase = .playing(roundEnds: settings.roundLength.map { now + $0 })
    }

    package var isOver: Bool { phase == .over }

    /// When ``tick(now:)`` has work: a round's end, a score flush, a retransmission.
    package func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        var candidates: [ContinuousClock.Instant] = []
        if case .playing(let ends?) = phase { candidates.append(ends) }
        if dirty { candidates.append(nextFlush ?? now) }
        if let d = peers.deadline(now: now) { candidates.append(d) }
        return candidates.min()
    }

    /// One datagram of `length` bytes from `source`.
    package mutating func datagram(_ bytes: [UInt8], length: Int, from source: Source, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard peers.admit(source, now: now) else { return out }
        if length == StatePacket.size && bytes.count == length {
            guard let state = try? StatePacket.decode(bytes) else { bad += 1; return out }
            states += 1
            guard phase != .over else { return out }
            guard let id = player(for: source, name: source.description, now: now, into: &out) else { return out }
            if game.button(state.buttons.contains(.a), player: id) {
                dirty = true
                out.events.append(.point(player: id))
            }
            return out
        }
        let (incoming, replies) = peers.receive(bytes, from: source, now: now)
        for r in replies { out.datagrams.append((source, r)) }
        for item in incoming {
            guard case .message(let message) = item else { continue }
            switch message {
            case .hello(let h):
                hello(h, from: source, now: now, into: &out)
            case .bye:
                if talking.remove(source) != nil, let id = playerOf[source] {
                    out.events.append(.left(name: game.players[id].name))
                }
            default:
                break
            }
        }
        return out
    }

    mutating func hello(_ h: ControlMessage.Hello, from source: Source, now: ContinuousClock.Instant, into out: inout Output) {
        if !settings.session.isEmpty, !h.session.isEmpty, !h.session.text.utf8.elementsEqual(settings.session.utf8) {
            peers.send(.deny(.init(reason: .wrongSession, text: "this game is in session \"\(settings.session)\", not \"\(h.session)\"", echo: h.nonce)),
                       to: source, now: now)
            return
        }
        if let id = playerOf[source] {
            let old = game.players[id].name
            if let new = game.rename(player: id, to: h.displayName.text), new != old {
                out.events.append(.renamed(from: old, to: new))
            }
        } else if player(for: source, name: h.displayName.text, now: now, into: &out) == nil {
            peers.send(.deny(.init(reason: .other, text: "the game is full (\(GameRound.maxPlayers) players)", echo: h.nonce)), to: source, now: now)
            return
        }
        // A connection id of its own (Protocol.md §7.1, version 2): the player's later datagrams
        // must carry it, so a forged bye from its address changes nothing.
        if peers.connectionID(of: source) == 0 {
            var rng = SystemRandomNumberGenerator()
            peers.assign(connectionID: UInt64.random(in: 1...UInt64.max, using: &rng), to: source, now: now)
        }
        peers.send(.accept(.init(peerID: settings.peerID, displayName: WireText(settings.name),
                                 failsafeMilliseconds: UInt16(clamping: settings.failsafe.milliseconds),
                                 rateHertz: UInt16(clamping: settings.rateHertz), echo: h.nonce)),
                   to: source, now: now)
        talking.insert(source)
        lastSent[source] = nil
        dirty = true
    }

    /// The player of `source`, joining it under `name` if new; nil when the game is full.
    mutating func player(for source: Source, name: String, now: ContinuousClock.Instant, into out: inout Output) -> Int? {
        if let id = playerOf[source] { return id }
        guard phase != .over else { return nil }
        switch game.join(name: name, now: now) {
        case .joined(let id), .existing(let id):
            playerOf[source] = id
            dirty = true
            out.events.append(.joined(name: game.players[id].name, source: source))
            return id
        case .full:
            if toldFull.count < 1024, toldFull.insert(source).inserted { out.events.append(.full(source)) }
            return nil
        }
    }

    /// Round ends, score updates, retransmissions.
    package mutating func tick(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        if case .playing(let ends?) = phase, now >= ends {
            out.events.append(.roundOver(game.round))
            if game.round < settings.rounds, let length = settings.roundLength {
                game.nextRound()
                phase = .playing(roundEnds: ends + length)
                dirty = true
                out.events.append(.roundStarted(game.round))
            } else {
                out.datagrams += finish(now: now).datagrams
                out.events.append(.gameOver)
            }
        }
        if dirty, now >= (nextFlush ?? now) {
            sendScores(phase: isOver ? .final : .playing, force: false, now: now)
            dirty = false
            nextFlush = now + settings.scoreInterval
        }
        let (datagrams, _) = peers.poll(now: now)
        out.datagrams += datagrams
        return out
    }

    /// Ends the game: no more points; every player who said hello gets its final score. Keep
    /// calling ``tick(now:)`` until ``peers``' backlog is 0 (or a linger time) so they arrive.
    package mutating func finish(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard phase != .over else { return out }
        phase = .over
        sendScores(phase: .final, force: true, now: now)
        dirty = false
        let (datagrams, _) = peers.poll(now: now)
        out.datagrams = datagrams
        return out
    }

    /// The score `source`'s player would get now.
    package func score(for source: Source) -> GameScore? {
        guard let id = playerOf[source] else { return nil }
        return score(of: id, ranks: ranks(), phase: isOver ? .final : .playing)
    }

    func ranks() -> [Int: Int] {
        var ranks: [Int: Int] = [:]
        for row in game.standings { ranks[row.player.id] = row.rank }
        return ranks
    }

    func score(of id: Int, ranks: [Int: Int], phase: GameScore.Phase) -> GameScore {
        GameScore(points: UInt32(clamping: game.players[id].points), rank: UInt16(clamping: ranks[id] ?? 0),
                  players: UInt16(clamping: game.players.count), round: UInt8(clamping: game.round),
                  rounds: UInt8(clamping: settings.rounds), phase: phase)
    }

    mutating func sendScores(phase: GameScore.Phase, force: Bool, now: ContinuousClock.Instant) {
        let ranks = ranks()
        for source in talking {
            guard let id = playerOf[source] else { continue }
            let score = score(of: id, ranks: ranks, phase: phase)
            if !force, lastSent[source] == score { continue }
            lastSent[source] = score
            peers.send(score.message, to: source, now: now)
        }
    }
}
