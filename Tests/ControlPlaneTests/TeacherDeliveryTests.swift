import ControlPlane
import ControlWire
import RemoteWire
import Testing

/// ``TeacherDelivery``: what `stop-all` and the dashboard send, on a manual clock.
@Suite struct TeacherDeliveryTests {
    static let key = Array("delivery-test-key".utf8)
    static let t0 = ContinuousClock.now

    static func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    static func delivery(key: [UInt8]? = key) -> TeacherDelivery<String> {
        TeacherDelivery(settings: .init(session: "class-3b", macKey: key, connection: 77))
    }

    static func message(_ datagram: [UInt8]) throws -> ControlMessage {
        let d = try ControlDatagram.decode(datagram)
        #expect(d.header.connection == 77)
        return try ControlMessage.decode(type: d.header.type, payload: d.payload)
    }

    @Test func aStopGoesOutAtOnceThenEverySpacingUntilItsTimesAreUp() {
        var d = Self.delivery()
        #expect(d.send(.stop, to: "r1", target: "id:abc", times: 3, nonce: 5, wallMillis: 1000, now: Self.at(0)) == 5)
        #expect(d.nextDeadline == Self.at(0))
        #expect(d.due(now: Self.at(0)).map(\.to) == ["r1"])
        #expect(d.due(now: Self.at(49)).isEmpty)
        #expect(d.nextDeadline == Self.at(50))
        #expect(d.due(now: Self.at(50)).count == 1)
        #expect(d.due(now: Self.at(100)).count == 1)
        #expect(d.due(now: Self.at(150)).isEmpty)
        #expect(d.nextDeadline == nil)
        #expect(d.count(5, to: "r1") == 3)
    }

    @Test func anAnswerEndsTheRepeatsAndNamesWhatItAnswered() {
        var d = Self.delivery()
        d.send(.teacher(.kick, argument: "time's up"), to: "r1", target: "id:abc", times: 3, nonce: 9, wallMillis: 1, now: Self.at(0))
        _ = d.due(now: Self.at(0))
        #expect(d.answered(9, from: "r2") == nil)       // another robot's socket: not ours
        #expect(d.answered(8, from: "r1") == nil)       // a nonce never sent
        #expect(d.answered(9, from: "r1") == .teacher(.kick, argument: "time's up"))
        #expect(d.due(now: Self.at(50)).isEmpty)
        #expect(d.nextDeadline == nil)
        #expect(d.command(9, to: "r1") == .teacher(.kick, argument: "time's up"))
    }

    @Test func theStopIsSignedForItsTargetAndVerifies() throws {
        var d = Self.delivery()
        d.send(.release, to: "r1", target: "id:abc", times: 1, nonce: 42, wallMillis: 1234, now: Self.at(0))
        let out = try #require(d.due(now: Self.at(0)).first)
        guard case .stopAll(let c) = try Self.message(out.datagram) else { Issue.record("not a stop-all"); return }
        #expect(c.action == .release && c.nonce == 42 && c.session == "class-3b" && c.target == "id:abc" && c.unixMillis == 1234)
        #expect(c.verify(key: Self.key))
        #expect(!c.verify(key: Array("another key".utf8)))
    }

    @Test func aTeacherCommandIsSignedAndCarriesItsArgument() throws {
        var d = Self.delivery()
        d.send(.teacher(.lock, argument: "Ann"), to: "r1", target: "robot-1", times: 1, nonce: 3, wallMillis: 1, now: Self.at(0))
        let out = try #require(d.due(now: Self.at(0)).first)
        guard case .teacher(let c) = try Self.message(out.datagram) else { Issue.record("not a teacher command"); return }
        #expect(c.action == .lock && c.argument == "Ann" && c.target == "robot-1" && c.nonce == 3)
        #expect(c.verify(key: Self.key))
    }

    @Test func theQueryIsUnsignedAndChangesNothing() throws {
        var d = Self.delivery()
        d.send(.query, to: "r1", target: "", times: 1, nonce: 4, wallMillis: 1, now: Self.at(0))
        let out = try #require(d.due(now: Self.at(0)).first)
        guard case .stopAll(let c) = try Self.message(out.datagram) else { Issue.record("not a stop-all"); return }
        #expect(c.action == .query && c.target.isEmpty && c.mac == [UInt8](repeating: 0, count: 16))
    }

    /// The empty target is every receiver of the session: only a stop (which can only stop a
    /// robot) and the query may go there.
    @Test(arguments: [TeacherDelivery<String>.Command.release, .teacher(.identify, argument: ""), .teacher(.kick, argument: "x"),
                      .teacher(.lock, argument: "Ann"), .teacher(.unlock, argument: ""), .teacher(.watch, argument: "")])
    func nothingButAStopIsAimedAtTheWholeSession(_ command: TeacherDelivery<String>.Command) {
        var d = Self.delivery()
        #expect(d.send(command, to: "r1", target: "", times: 3, nonce: 1, wallMillis: 1, now: Self.at(0)) == nil)
        #expect(d.due(now: Self.at(0)).isEmpty)
        #expect(d.send(.stop, to: "r1", target: "", times: 3, nonce: 2, wallMillis: 1, now: Self.at(0)) == 2)
    }

    @Test func withoutAKeyAStopGoesUnsignedAndATeacherCommandNotAtAll() throws {
        var d = Self.delivery(key: nil)
        #expect(d.send(.teacher(.identify, argument: ""), to: "r1", target: "id:abc", times: 1, nonce: 1, wallMillis: 1, now: Self.at(0)) == nil)
        d.send(.stop, to: "r1", target: "id:abc", times: 1, nonce: 2, wallMillis: 1, now: Self.at(0))
        let out = try #require(d.due(now: Self.at(0)).first)
        guard case .stopAll(let c) = try Self.message(out.datagram) else { Issue.record("not a stop-all"); return }
        #expect(c.action == .stop && c.mac == [UInt8](repeating: 0, count: 16))
    }

    @Test func datagramsLeaveInTheOrderTheyWereQueuedWhateverThePeer() {
        var d = Self.delivery()
        for (i, peer) in ["c", "a", "b", "a"].enumerated() {
            d.send(.stop, to: peer, target: "", times: 1, nonce: UInt64(i + 1), wallMillis: 1, now: Self.at(0))
        }
        #expect(d.due(now: Self.at(0)).map(\.to) == ["c", "a", "b", "a"])
    }

    @Test func onlyTheLastNoncesArePeersRemembered() {
        var d = Self.delivery()
        for n in 1...40 { d.send(.query, to: "r1", target: "", times: 1, nonce: UInt64(n), wallMillis: 1, now: Self.at(0)) }
        #expect(d.command(8, to: "r1") == nil)
        #expect(d.command(9, to: "r1") == .query)
        #expect(d.send(.query, to: "r1", target: "", times: 1, nonce: 40, wallMillis: 1, now: Self.at(0)) == nil)   // in use
    }

    @Test func aMovedCommandStartsAgainAtItsNewPeer() {
        var d = Self.delivery()
        d.send(.stop, to: "old", target: "", times: 2, nonce: 7, wallMillis: 1, now: Self.at(0))
        _ = d.due(now: Self.at(0))
        _ = d.due(now: Self.at(50))
        d.move(7, from: "old", to: "new", now: Self.at(60))
        #expect(d.due(now: Self.at(60)).map(\.to) == ["new"])
        #expect(d.count(7, to: "new") == 1)
        #expect(d.command(7, to: "old") == nil)
    }

    @Test func aCancelledCommandStopsButIsStillRecognised() {
        var d = Self.delivery()
        d.send(.stop, to: "r1", target: "", times: 5, nonce: 7, wallMillis: 1, now: Self.at(0))
        _ = d.due(now: Self.at(0))
        d.cancel(7, to: "r1")
        #expect(d.due(now: Self.at(50)).isEmpty)
        #expect(d.answered(7, from: "r1") == .stop)
        d.forget("r1")
        #expect(d.command(7, to: "r1") == nil)
    }
}
