import ControlPlane
import ControlWire
import RemoteWire
import StopAll
import SystemIO
import Testing

/// A generator that repeats itself: the nonces a test sees are known.
struct CountingRandom: RandomNumberGenerator, Sendable {
    var state: UInt64 = 0x1000
    mutating func next() -> UInt64 { state += 1; return state }
}

/// stop-all on a manual clock: every call takes the time in ms since the start.
final class StopAllRig {
    let start = ContinuousClock.now
    var machine: StopAllMachine<CountingRandom>
    let wall: UInt64 = 1_764_000_000_000

    init(peers: [String] = ["127.0.0.1:45678"], browseMs: Int = 0, teacherKey: String? = nil, release: Bool = false,
         robots: Set<RobotID> = [], known: [KnownReceivers.Entry] = [], broadcast: [String] = []) throws {
        var settings = StopAllMachine<CountingRandom>.Settings(session: "class-3b", release: release,
                                                               teacherKey: teacherKey.map { TeacherKey(macKey: Array($0.utf8)) },
                                                               browseFor: .milliseconds(browseMs))
        settings.robots = robots
        settings.broadcast = try broadcast.map { try SocketAddress.resolve($0) }
        machine = StopAllMachine(settings: settings, peers: try peers.map { try SocketAddress.resolve($0) }, known: known, now: start,
                                 wallMillis: wall, random: CountingRandom())
    }

    func at(_ ms: Int) -> ContinuousClock.Instant { start + .milliseconds(ms) }
    func tick(_ ms: Int) -> [StopAllMachine<CountingRandom>.Action] { machine.tick(now: at(ms)) }
    func handle(_ event: StopAllMachine<CountingRandom>.Event, _ ms: Int) -> [StopAllMachine<CountingRandom>.Action] {
        machine.handle(event, now: at(ms), wallMillis: wall + UInt64(ms))
    }

    /// The stop-all messages among `actions`, decoded.
    static func sent(_ actions: [StopAllMachine<CountingRandom>.Action]) -> [ControlMessage.StopAll] {
        actions.compactMap {
            guard case .send(let bytes, _) = $0, let d = try? ControlDatagram.decode(bytes),
                  case .stopAll(let m)? = try? ControlMessage.decode(type: .stopAll, payload: d.payload) else { return nil }
            return m
        }
    }

    /// Every tick due until the run is over, with `replies` handled at their time (ms → event).
    func runToEnd(from ms: Int, replies: [Int: [StopAllMachine<CountingRandom>.Event]] = [:]) -> [StopAllMachine<CountingRandom>.Action] {
        var out: [StopAllMachine<CountingRandom>.Action] = []
        var pending = replies
        var now = ms
        while let next = machine.nextDeadline {
            let due = Int((next - start) / .milliseconds(1))
            for t in pending.keys.sorted() where t <= due {
                for e in pending.removeValue(forKey: t)! { out += handle(e, max(t, now)) }
            }
            now = max(now, due)
            out += tick(now)
        }
        return out
    }

    static func prints(_ actions: [StopAllMachine<CountingRandom>.Action]) -> [String] {
        actions.compactMap { if case .print(let line) = $0 { return line } else { return nil } }
    }

    static func reply(_ nonce: UInt64, _ outcome: ControlMessage.StopAllReply.Outcome, name: String = "robot", text: String = "",
                      signedWith key: String? = nil) -> [UInt8] {
        var r = ControlMessage.StopAllReply(nonce: nonce, outcome: outcome, displayName: WireText(name), text: WireText(text))
        if let key { r.sign(key: Array(key.utf8)) }
        return ControlDatagram(header: ControlHeader(type: .stopAllReply, connection: 7),
                               payload: ControlMessage.stopAllReply(r).encodePayload()[...]).encode()
    }
}

@Suite struct StopAllMachineTests {
    let robot = try! SocketAddress.resolve("127.0.0.1:45678")

    @Test func aSilentReceiverGetsTenStopsFiftyMillisecondsApartThenTheSummary() throws {
        let rig = try StopAllRig()
        var queries: [ControlMessage.StopAll] = []
        var ms = 0
        var last: [StopAllMachine<CountingRandom>.Action] = []
        while true {
            last = rig.tick(ms)
            queries += StopAllRig.sent(last)
            guard let next = rig.machine.nextDeadline else { break }
            ms = Int((next - rig.start) / .milliseconds(1))
        }
        #expect(queries.count == 10)
        #expect(queries.allSatisfy { $0.action == .stop && $0.session == "class-3b" && $0.target.isEmpty })
        #expect(Set(queries.map(\.nonce)).count == 1, "repeats of one command")
        // The last repeat at 450 ms, then 300 ms for a late reply.
        #expect(ms == 750)
        #expect(StopAllRig.prints(last) == ["no answer from 127.0.0.1:45678 (sent 10 times; is it running?)", "reached 0 of 1 receiver"])
        #expect(last.last == .finish(.notEveryReceiverTookIt))
    }

    /// The emergency first: the signed stop is the very first datagram to a receiver given by
    /// address, aimed at the session (its robot id is not known yet); no query is ever sent,
    /// and the signed reply names the receiver.
    @Test func theStopGoesOutAtOnceSignedBeforeAnyQuery() throws {
        let rig = try StopAllRig(peers: ["127.0.0.1:45678", "127.0.0.1:45679"], teacherKey: "k")
        let first = rig.tick(0)
        let sent = StopAllRig.sent(first)
        #expect(sent.count == 2 && first.count == 2, "one datagram per receiver, nothing else: \(first)")
        #expect(sent.allSatisfy { $0.action == .stop && $0.target.isEmpty && $0.session == "class-3b" && $0.verify(key: Array("k".utf8)) })
        #expect(sent[0].nonce != sent[1].nonce, "a fresh nonce per receiver")
        var all = sent
        let other = try SocketAddress.resolve("127.0.0.1:45679")
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(sent[0].nonce, .stopped, name: "robot", text: "id:k3m9x2ab",
                                                                        signedWith: "k"), from: robot), 4))
                == ["stopped \"robot\" 127.0.0.1:45678"])
        var ms = 0
        while let next = rig.machine.nextDeadline {
            ms = Int((next - rig.start) / .milliseconds(1))
            let actions = rig.tick(ms)
            all += StopAllRig.sent(actions)
            if ms == 100 {
                _ = rig.handle(.datagram(StopAllRig.reply(sent[1].nonce, .stopped, name: "robot2", signedWith: "k"), from: other), 100)
            }
        }
        #expect(!all.contains { $0.action == .query }, "a query went out: \(all.map(\.action))")
        #expect(all.filter { $0.nonce == sent[1].nonce }.count == 3, "repeated until it answered")
    }

    /// A receiver announced with its robot id (TXT `robot=`) gets the stop aimed at that id at
    /// once; one that announces none, the stop aimed at the session, also at once.
    @Test func aBrowsedReceiverGetsTheStopAtOnceAimedAtItsAnnouncedID() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000, teacherKey: "k")
        #expect(rig.tick(0).isEmpty)
        let v6 = try SocketAddress.resolve("[::1]:45678")
        _ = rig.handle(.browsed([.init(label: "robot", identity: "robot", address: robot, robot: RobotID("k3m9x2ab")),
                                 .init(label: "old", identity: "old", address: v6)]), 30)
        let sent = StopAllRig.sent(rig.tick(30))
        #expect(sent.map(\.action) == [.stop, .stop])
        #expect(sent.map(\.target) == ["id:k3m9x2ab", ""])
        #expect(sent.allSatisfy { $0.verify(key: Array("k".utf8)) })
    }

    /// A release is not an emergency: the receiver names itself first (an unsigned query), then
    /// gets the release signed for it alone, so a captured release is refused by every other robot.
    @Test func aReleaseIsSignedForTheReceiverThatNamedItself() throws {
        let rig = try StopAllRig(teacherKey: "k", release: true)
        let query = try #require(StopAllRig.sent(rig.tick(0)).first)
        #expect(query.action == .query)
        #expect(rig.handle(.datagram(StopAllRig.reply(query.nonce, .stopped, name: "robot"), from: robot), 10).isEmpty)
        let command = try #require(StopAllRig.sent(rig.tick(10)).first)
        #expect(command.action == .release)
        #expect(command.target == "robot")
        #expect(command.nonce != query.nonce)
        #expect(command.verify(key: Array("k".utf8)))
        // A stale reply (the query's nonce) is not the command's answer.
        #expect(rig.handle(.datagram(StopAllRig.reply(query.nonce, .stopped), from: robot), 20).isEmpty)
        // With a key, an unsigned "stopped" (forged) is not the answer; the signed one is.
        #expect(rig.handle(.datagram(StopAllRig.reply(command.nonce, .released), from: robot), 25).isEmpty)
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(command.nonce, .released, signedWith: "k"), from: robot), 30))
                == ["released \"robot\" 127.0.0.1:45678"])
        // Every receiver has answered: the next tick ends the run.
        let end = rig.tick(40)
        #expect(StopAllRig.prints(end) == ["reached 1 of 1 receiver"])
        #expect(end.last == .finish(.everyReceiverTookIt))
        #expect(rig.machine.nextDeadline == nil)
    }

    /// A receiver that names its robot id gets a command aimed at that id, not at its name
    /// (Protocol.md §7.6.1): its clone with the same name refuses a captured one.
    @Test func aReceiverWithARobotIDGetsACommandAimedAtTheID() throws {
        let rig = try StopAllRig(teacherKey: "k", release: true)
        let query = try #require(StopAllRig.sent(rig.tick(0)).first)
        _ = rig.handle(.datagram(StopAllRig.reply(query.nonce, .stopped, name: "robot", text: "id:k3m9x2ab"), from: robot), 5)
        let command = try #require(StopAllRig.sent(rig.tick(5)).first)
        #expect(command.target == "id:k3m9x2ab" && command.verify(key: Array("k".utf8)))
    }

    /// `--robot ID`: a receiver whose TXT names another id is not even queried; one whose reply
    /// names another id gets no command and is not counted; the one asked for is.
    @Test func withRobotOnlyThatRobotGetsTheCommand() throws {
        let wanted = try #require(RobotID("k3m9x2ab"))
        let rig = try StopAllRig(peers: ["127.0.0.1:45678", "127.0.0.1:45679"], browseMs: 0, robots: [wanted])
        let clone = try SocketAddress.resolve("127.0.0.1:45679")
        // Never a stop aimed at the session: it would stop robots not asked for.
        let queries = StopAllRig.sent(rig.tick(0))
        #expect(queries.count == 2 && queries.allSatisfy { $0.action == .query })
        _ = rig.handle(.datagram(StopAllRig.reply(queries[0].nonce, .released, name: "robot", text: "id:k3m9x2ab"), from: robot), 5)
        _ = rig.handle(.datagram(StopAllRig.reply(queries[1].nonce, .released, name: "robot", text: "id:k3m9x2ac"), from: clone), 6)
        let sent = rig.tick(10)
        #expect(sent.compactMap { if case .send(_, let to) = $0 { to } else { nil } } == [robot])
        let command = try #require(StopAllRig.sent(sent).first)
        #expect(command.target == "id:k3m9x2ab")
        #expect(StopAllRig.prints(rig.handle(.datagram(StopAllRig.reply(command.nonce, .stopped, name: "robot", text: "id:k3m9x2ab"), from: robot), 15))
                == ["stopped \"robot\" 127.0.0.1:45678"])
        let end = rig.tick(20)
        #expect(StopAllRig.prints(end) == ["reached 1 of 1 receiver"])
        #expect(end.last == .finish(.everyReceiverTookIt))

        let browsing = try StopAllRig(peers: [], browseMs: 100, robots: [wanted])
        _ = browsing.handle(.browsed([.init(label: "robot", identity: "robot [1]", address: clone, robot: RobotID("k3m9x2ac"))]), 1)
        #expect(StopAllRig.sent(browsing.tick(1)).isEmpty, "a receiver announced with another robot id is not queried")
        _ = browsing.handle(.browsed([.init(label: "robot", identity: "robot [2]", address: robot, robot: wanted)]), 2)
        #expect(StopAllRig.sent(browsing.tick(2)).map(\.target) == ["id:k3m9x2ab"], "the one announced with that id: stopped at once")
    }

    @Test func aRefusedQueryIsSaidAtOnceAndCountsAsNotTaken() throws {
        let rig = try StopAllRig(release: true)
        let query = try #require(StopAllRig.sent(rig.tick(0)).first)
        let said = rig.handle(.datagram(StopAllRig.reply(query.nonce, .refused, name: "robot", text: "another session"), from: robot), 5)
        #expect(StopAllRig.prints(said) == ["refused by \"robot\" 127.0.0.1:45678: another session"])
        let end = rig.tick(50)
        #expect(StopAllRig.sent(end).isEmpty)
        #expect(StopAllRig.prints(end) == ["reached 0 of 1 receiver"])
        #expect(end.last == .finish(.notEveryReceiverTookIt))
    }

    @Test func aReplyFromAnUnknownAddressOrOfAnotherKindIsIgnored() throws {
        let rig = try StopAllRig()
        let query = try #require(StopAllRig.sent(rig.tick(0)).first)
        let stranger = try SocketAddress.resolve("127.0.0.2:45678")
        #expect(rig.handle(.datagram(StopAllRig.reply(query.nonce, .stopped), from: stranger), 5).isEmpty)
        #expect(rig.handle(.datagram([0, 1, 2, 3], from: robot), 6).isEmpty)
        #expect(StopAllRig.sent(rig.tick(50)).map(\.action) == [.stop])
    }

    @Test func browsingFindsReceiversOnceEachAndEndsWithNoneWhenNoneTurnUp() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000)
        #expect(rig.machine.opening == [.status("looking for the receivers of session \"class-3b\"…", force: true)])
        #expect(rig.tick(0).isEmpty)
        #expect(rig.machine.nextDeadline == rig.at(2000))
        #expect(rig.handle(.browsed([]), 1000) == [.status("session \"class-3b\": 0 receivers found", force: false)])
        let end = rig.tick(2000)
        #expect(StopAllRig.prints(end) == ["reached 0 of 0 receivers"])
        #expect(end.last == .finish(.noReceivers))
    }

    @Test func aReceiverSeenAtTwoAddressesIsReachedOnce() throws {
        let rig = try StopAllRig(peers: [], browseMs: 2000)
        let v6 = try SocketAddress.resolve("[::1]:45678")
        let found = rig.handle(.browsed([.init(label: "robot", identity: "robot", address: robot),
                                         .init(label: "robot", identity: "robot", address: v6)]), 100)
        #expect(found == [.status("session \"class-3b\": 1 receiver found", force: false)])
        #expect(StopAllRig.sent(rig.tick(100)).count == 1)
    }

    @Test func anInterruptEndsTheRunWithWhatIsKnown() throws {
        let rig = try StopAllRig()
        _ = rig.tick(0)
        let end = rig.handle(.interrupted, 20)
        #expect(StopAllRig.prints(end) == ["no answer from 127.0.0.1:45678 (sent 1 time; is it running?)", "reached 0 of 1 receiver"])
        #expect(end.last == .finish(.notEveryReceiverTookIt))
        #expect(rig.tick(100).isEmpty)
    }
}
