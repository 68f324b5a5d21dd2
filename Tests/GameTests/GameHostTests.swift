import ControlPlane
import ControlWire
import Game
import RemoteWire
import Testing

/// A player's side: a reliable channel, fed what the host sends to its source.
struct Player {
    let source: Int
    var channel: ReliableChannel
    var delivered: [ControlMessage] = []

    init(_ source: Int) {
        self.source = source
        channel = ReliableChannel(connection: UInt32(1000 + source))
    }

    var scores: [GameScore] {
        delivered.compactMap { m in
            guard case .data(let ch, let bytes) = m, ch == GameScore.channel else { return nil }
            return try? GameScore.decode(bytes)
        }
    }
}

/// Drives a ``GameHost`` with a manual clock and perfect delivery both ways.
final class GameRig {
    var host: GameHost<Int>
    var players: [Int: Player] = [:]
    var events: [GameHost<Int>.Event] = []
    var now = ContinuousClock.now

    init(rounds: Int = 1, seconds: Int? = nil) {
        let settings = GameSettings(name: "game", session: "class", rounds: rounds,
                                    roundLength: seconds.map { .seconds($0) }, peerID: 9)
        host = GameHost(settings: settings, connection: 77, now: now)
    }

    func deliver(_ out: GameHost<Int>.Output) {
        events += out.events
        for (source, bytes) in out.datagrams {
            guard var p = players[source], let d = try? ControlDatagram.decode(bytes) else { continue }
            for case .delivered(let m) in p.channel.receive(d, now: now) {
                p.delivered.append(m)
                // As a real controller: the accept's connection id goes on every later datagram.
                if case .accept = m { p.channel.connectionID = d.header.connectionID }
            }
            players[source] = p
        }
        // Acks back.
        for (source, var p) in players {
            let acks = p.channel.poll(now: now).datagrams
            players[source] = p
            for a in acks { events += host.datagram(a, length: a.count, from: source, now: now).events }
        }
    }

    func hello(_ source: Int, _ name: String, session: String = "") {
        var p = players[source] ?? Player(source)
        try? p.channel.send(.hello(.init(peerID: UInt64(source), displayName: WireText(name), session: WireText(session))))
        let out = p.channel.poll(now: now).datagrams
        players[source] = p
        for d in out { deliver(host.datagram(d, length: d.count, from: source, now: now)) }
        deliver(host.tick(now: now))   // as the service does after each batch: queued replies go out
    }

    func state(_ source: Int, a: Bool) {
        let bytes = StatePacket.encode(ControllerState(angle: 0, buttons: a ? .a : []))
        deliver(host.datagram(bytes, length: 8, from: source, now: now))
    }

    func press(_ source: Int, times: Int) {
        for _ in 0..<times { state(source, a: true); state(source, a: true); state(source, a: false) }
    }

    func advance(ms: Int) {
        now += .milliseconds(ms)
        deliver(host.tick(now: now))
    }
}

@Suite struct GameHostTests {
    @Test func helloJoinsAcceptsAndScoresComeBackThrottled() throws {
        let rig = GameRig()
        rig.hello(1, "Ann")
        rig.hello(2, "Bob")
        #expect(rig.events.contains(.joined(name: "Ann", source: 1)))
        #expect(rig.players[1]?.delivered.first == .accept(.init(peerID: 9, displayName: "game", failsafeMilliseconds: 250, rateHertz: 50)))
        rig.press(1, times: 3)
        rig.press(2, times: 1)
        rig.advance(ms: 100)
        let ann = try #require(rig.players[1]?.scores.last)
        #expect(ann == GameScore(points: 3, rank: 1, players: 2, round: 1, rounds: 1, phase: .playing))
        #expect(rig.players[2]?.scores.last?.rank == 2)
        // Further presses inside the interval wait for it; one message carries the latest count.
        let before = rig.players[1]?.scores.count ?? 0
        rig.press(1, times: 2)
        rig.advance(ms: 50)
        #expect(rig.players[1]?.scores.count == before)
        rig.advance(ms: 50)
        #expect(rig.players[1]?.scores.count == before + 1)
        #expect(rig.players[1]?.scores.last?.points == 5)
        // Nothing changed for Bob's points, rank or player count: no message for him.
        #expect(rig.players[2]?.scores.count == 1, "\(rig.players[2]?.scores ?? [])")
        #expect(rig.host.peers.backlog == 0, "everything acknowledged")
    }

    @Test func aPlainSenderPlaysUnderItsAddressAndIsRenamedByAHello() {
        let rig = GameRig()
        rig.press(5, times: 2)
        #expect(rig.events.contains(.joined(name: "5", source: 5)))
        #expect(rig.host.game.players.map(\.name) == ["5"])
        rig.hello(5, "Eve")
        #expect(rig.events.contains(.renamed(from: "5", to: "Eve")))
        rig.advance(ms: 100)
        #expect(rig.players[5]?.scores.last?.points == 2, "points kept through the rename")
    }

    @Test func holdingACountsOnce() {
        let rig = GameRig()
        rig.hello(1, "Ann")
        for _ in 0..<20 { rig.state(1, a: true) }
        rig.state(1, a: false)
        rig.state(1, a: true)
        #expect(rig.host.game.players[0].points == 2)
    }

    @Test func theSixtyFifthPlayerIsDenied() {
        let rig = GameRig()
        for i in 0..<64 { rig.hello(i, "p\(i)") }
        rig.hello(64, "late")
        guard case .deny(let d)? = rig.players[64]?.delivered.first else { Issue.record("no deny"); return }
        #expect(d.reason == .other && d.text.text.contains("full"))
        #expect(rig.events.contains(.full(64)))
        rig.press(65, times: 1)
        #expect(rig.host.game.players.count == 64)
    }

    @Test func anotherSessionIsDenied() {
        let rig = GameRig()
        rig.hello(1, "Ann", session: "other")
        guard case .deny(let d)? = rig.players[1]?.delivered.first else { Issue.record("no deny"); return }
        #expect(d.reason == .wrongSession)
        #expect(rig.host.game.players.isEmpty)
    }

    @Test func roundsAdvanceOnTimeAndTheLastOneEndsTheGameWithFinalScores() throws {
        let rig = GameRig(rounds: 2, seconds: 10)
        rig.hello(1, "Ann")
        rig.hello(2, "Bob")
        rig.press(1, times: 2)
        rig.advance(ms: 9_999)
        #expect(!rig.events.contains(.roundOver(1)))
        rig.advance(ms: 1)
        #expect(rig.events.contains(.roundOver(1)) && rig.events.contains(.roundStarted(2)))
        rig.press(2, times: 3)
        rig.press(1, times: 1)
        rig.advance(ms: 10_000)
        #expect(rig.events.contains(.gameOver) && rig.host.isOver)
        let final = try #require(rig.players[2]?.scores.last)
        #expect(final == GameScore(points: 3, rank: 1, players: 2, round: 2, rounds: 2, phase: .final))
        rig.press(1, times: 5)
        #expect(rig.host.game.players[0].points == 3, "no points after the end")
        #expect(rig.host.game.csv() == "rank,name,points,round1,round2\r\n1,Ann,3,2,1\r\n1,Bob,3,0,3\r\n")
        #expect(rig.host.game.json(header: ["session": "class"])
                == "{\"session\":\"class\",\"players\":[{\"rank\":1,\"name\":\"Ann\",\"points\":3,\"rounds\":[2,1]},{\"rank\":1,\"name\":\"Bob\",\"points\":3,\"rounds\":[0,3]}]}\n")
    }

    @Test func finishSendsTheFinalScoreEvenIfUnchanged() {
        let rig = GameRig()
        rig.hello(1, "Ann")
        rig.press(1, times: 1)
        rig.advance(ms: 100)
        rig.deliver(rig.host.finish(now: rig.now))
        #expect(rig.players[1]?.scores.last == GameScore(points: 1, rank: 1, players: 1, round: 1, rounds: 1, phase: .final))
        #expect(rig.host.deadline(now: rig.now) == nil, "acknowledged: nothing left to do")
    }
}

@Suite struct PeerTableTests {
    let t0 = ContinuousClock.now

    @Test func aPingFromAStrangerIsAnsweredWithoutOpeningAChannel() throws {
        var table = PeerTable<Int>(connection: 5)
        let ping = ControlDatagram(header: ControlHeader(type: .ping, connection: 8),
                                   payload: ControlMessage.ping(id: 3, sentNanos: 99).encodePayload()[...]).encode()
        let (incoming, replies) = table.receive(ping, from: 1, now: t0)
        #expect(incoming.isEmpty)
        let pong = try ControlDatagram.decode(try #require(replies.first))
        #expect(try ControlMessage.decode(type: pong.header.type, payload: pong.payload) == .pong(id: 3, sentNanos: 99))
        #expect(!table.hasChannel(1))
    }

    @Test func garbageIsRefusedAndCounted() {
        var table = PeerTable<Int>(connection: 5)
        let (incoming, replies) = table.receive([0x41, 0x52, 9, 9] + [UInt8](repeating: 0, count: 30), from: 1, now: t0)
        #expect(replies.isEmpty && incoming.count == 1)
        #expect(table.refused == 1)
    }

    @Test func theTableStaysBoundedAndEvictsChannelLessSourcesFirst() {
        var options = PeerTable<Int>.Options()
        options.capacity = 8
        var table = PeerTable<Int>(connection: 5, options: options)
        table.send(.bye, to: 0, now: t0)             // source 0 has a channel
        for i in 1..<100 { _ = table.admit(i, now: t0 + .milliseconds(i)) }
        #expect(table.count <= 8)
        #expect(table.hasChannel(0), "the channel outlives fresher plain sources")
        #expect(table.evicted >= 92)
    }

    @Test func idlePeersAreDroppedAfterTheTimeout() {
        var options = PeerTable<Int>.Options()
        options.idleTimeout = .seconds(30)
        var table = PeerTable<Int>(connection: 5, options: options)
        _ = table.admit(1, now: t0)
        _ = table.poll(now: t0)
        _ = table.poll(now: t0 + .seconds(29))
        #expect(table.count == 1)
        _ = table.poll(now: t0 + .seconds(41))
        #expect(table.count == 0)
    }
}
