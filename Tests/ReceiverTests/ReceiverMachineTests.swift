import ControlPlane
import ControlWire
import DriveRecord
import Receiver
import RemoteWire
import SystemIO
import Testing

/// The ordering rules of one wake-up (``ReceiverMachine``), each on a manual clock: the machine
/// is fed batches of datagrams and the time, and what it asks for is read from its actions.
/// Nothing here opens a socket or starts a process.
@Suite struct ReceiverMachineTests {
    static let a = SocketAddress(addressBytes: [127, 0, 0, 1], port: 5001)!
    static let b = SocketAddress(addressBytes: [127, 0, 0, 2], port: 5002)!
    static let teacher = SocketAddress(addressBytes: [127, 0, 0, 9], port: 5009)!
    static let forward = ControllerState(angle: 0, buttons: [.forward])
    static let forwardA = ControllerState(angle: 0, buttons: [.forward, .a])
    static let forwardLeft = ControllerState(angle: -0.5, buttons: [.forward])

    /// `owner-first`: the owner's states of a wake-up are handled before anyone else's, whatever
    /// the order they were read in. Here a flood's datagrams read first were stamped after the
    /// failsafe deadline and the owner's state (read last) before it: the owner keeps driving.
    @Test func theOwnersStatesAreHandledBeforeAFloodReadInTheSameWakeUp() {
        let h = MachineHarness(.first)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 0)
        #expect(h.machine.engine.ownership.owner == Self.a)
        var batch: [(SocketAddress, [UInt8], Int?)] = (0..<50).map { i in
            (SocketAddress(addressBytes: [10, 0, 0, UInt8(i + 1)], port: 6000)!, StatePacket.encode(.neutral), 260)
        }
        batch.append((Self.a, StatePacket.encode(Self.forward), 240))
        let actions = h.receive(batch, ms: 300)
        #expect(h.machine.engine.counters.failsafeTrips == 0, "the flood's later stamps tripped the failsafe first")
        #expect(h.machine.engine.ownership.owner == Self.a)
        #expect(h.machine.engine.applied == Self.forward)
        #expect(MachineHarness.boardWrites(actions).count == 1)
    }

    /// `control after states`: the owner's own control datagrams (its bye) are handled after
    /// everyone's states in the wake-up, so a stranger's state read in the same wake-up is judged
    /// against a robot still owned, and does not take the robot the bye frees.
    @Test func theOwnersByeIsHandledAfterEveryonesStates() throws {
        let h = MachineHarness(.first)
        var ann = ChannelController()
        h.hello(&ann, from: Self.a, name: "Ann", ms: 0)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 10)
        #expect(h.machine.engine.ownership.owner == Self.a)
        let bye = try #require(ann.send(.bye).first)
        h.receive([(Self.a, bye, nil), (Self.b, StatePacket.encode(.neutral), nil)], ms: 20)
        #expect(h.machine.engine.ownership.owner == nil, "B took the robot in the wake-up of A's bye")
        #expect(h.machine.engine.counters.ignored == 1, "B's state was judged against A's robot")
        // The next wake-up B may take it (after a resting state, as after any bye).
        h.receive([(Self.b, StatePacket.encode(.neutral), nil)], ms: 30)
        #expect(h.machine.engine.ownership.owner == Self.b)
    }

    /// `in place`: everyone else's control datagrams are handled where they were read, before
    /// that source's next datagram: a hello with the pairing code and a state right behind it in
    /// one wake-up drive at once.
    @Test func aStrangersHelloIsHandledBeforeItsStateInTheSameWakeUp() {
        let h = MachineHarness(.paired)
        var bob = ChannelController()
        let hello = bob.send(.hello(.init(peerID: 7, displayName: "Bob", pairingCode: WireText(MachineHarness.pairingCode))))
        let actions = h.receive(hello.map { (Self.b, $0, nil) } + [(Self.b, StatePacket.encode(.neutral), nil)], ms: 0)
        #expect(h.machine.engine.counters.ignored == 0, "the state was judged before the hello")
        #expect(h.machine.engine.ownership.owner == Self.b)
        #expect(actions.contains { if case .send(_, let to) = $0 { to == Self.b } else { false } }, "the accept went out")
    }

    /// `rate limit first`: past the budget shared by every source but the owner nothing is
    /// decoded (the bad packets beyond it are counted as limited, not as bad), and the owner is
    /// not held to that budget.
    @Test func theStrangersBudgetIsSpentBeforeAnythingIsDecodedAndNeverTheOwners() {
        let h = MachineHarness(.first, strangerBurst: 3)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 0)
        let bad = [UInt8](repeating: 0xFF, count: StatePacket.size)
        var batch: [(SocketAddress, [UInt8], Int?)] = (0..<10).map { _ in (Self.b, bad, nil) }
        batch += [Self.forward, .neutral, Self.forwardA].map { (Self.a, StatePacket.encode($0), nil) }
        h.receive(batch, ms: 1)
        let counters = h.machine.engine.counters
        #expect(counters.bad == 2, "3 tokens: the owner's first state at start-up took one")
        #expect(counters.limited == 8)
        #expect(h.machine.engine.applied == Self.forwardA, "every state of the owner was taken")
    }

    /// `one write`: however many states a wake-up holds, the board gets one write, the last
    /// state's values.
    @Test func aWakeUpIsOneBoardWriteOfTheLastState() {
        let h = MachineHarness(.first)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 0)
        let actions = h.receive([Self.forward, Self.forwardLeft, Self.forwardA].map { (Self.a, StatePacket.encode($0), nil) }, ms: 10)
        let writes = MachineHarness.boardWrites(actions)
        #expect(writes.count == 1)
        #expect(writes.first == h.machine.engine.board)
        #expect(h.machine.engine.applied == Self.forwardA)
    }

    /// `teacher check`: a state from the student the teacher kicked never drives; it is told
    /// why once, not once per state.
    @Test func aKickedStudentsStatesNeverDriveAndItIsToldOnce() throws {
        let h = MachineHarness(.first, teacherKey: "teacher-secret")
        var ann = ChannelController()
        h.hello(&ann, from: Self.a, name: "Ann", ms: 0)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 10)
        h.receive([(Self.a, StatePacket.encode(Self.forward), nil)], ms: 20)
        #expect(h.machine.engine.applied == Self.forward)
        // The kick and the student's next state in one wake-up: the kick stops the robot first.
        let kick = h.receive([(Self.teacher, h.teacherCommand(.kick, nonce: 1), nil), (Self.a, StatePacket.encode(Self.forward), nil)], ms: 30)
        #expect(kick.contains { if case .send(_, let to) = $0 { to == Self.a } else { false } }, "the student was told")
        #expect(h.machine.engine.ownership.owner == nil)
        #expect(h.machine.engine.applied == nil)
        var told = 0
        for ms in stride(from: 40, through: 200, by: 10) {
            let actions = h.receive([(Self.a, StatePacket.encode(.neutral), nil), (Self.a, StatePacket.encode(Self.forward), nil)], ms: ms)
            told += actions.filter { if case .send(_, let to) = $0 { to == Self.a } else { false } }.count
            #expect(h.machine.engine.ownership.owner == nil, "the kicked student took the robot back at \(ms) ms")
            #expect(h.machine.engine.wheels == .init(left: 0, right: 0))
        }
        #expect(told <= 2, "a deny and its report, once: \(told) datagrams")
    }

    /// The failsafe on the manual clock: silence past the deadline stops the motors in the
    /// wake-up that finds it, and says so (a status redraw and the warning).
    @Test func silencePastTheDeadlineStopsTheMotorsOnTheWakeUpThatFindsIt() {
        let h = MachineHarness(.first)
        h.receive([(Self.a, StatePacket.encode(.neutral), nil)], ms: 0)
        h.receive([(Self.a, StatePacket.encode(Self.forward), nil)], ms: 100)
        #expect(h.machine.deadline(now: h.tick(ms: 100)) == h.tick(ms: 350))
        let early = h.wake(ms: 349)
        #expect(MachineHarness.boardWrites(early).isEmpty)
        let late = h.wake(ms: 350)
        #expect(h.machine.engine.counters.failsafeTrips == 1)
        #expect(h.machine.engine.wheels == .init(left: 0, right: 0))
        #expect(MachineHarness.boardWrites(late).count == 1)
        #expect(late.contains { if case .statusChanged = $0 { true } else { false } })
    }
}

/// A machine on a manual clock: `ms` since an arbitrary start.
final class MachineHarness {
    static let pairingCode = "4711"
    static let unixMillisAtStart: UInt64 = 1_795_000_000_000
    let start = Tick.now()
    var machine: ReceiverMachine
    let teacherKey: String?

    init(_ accept: AcceptMode, strangerBurst: Double = 4_000, teacherKey: String? = nil, failsafeMs: Int = 250,
         records: Bool = false) {
        var settings = ClassroomSettings()
        settings.accept = accept
        settings.pairingCode = Self.pairingCode
        settings.teacherKey = teacherKey.map { TeacherKey(macKey: Array($0.utf8)) }
        settings.session = "class"
        settings.displayName = "robot-1"
        settings.failsafe = FailsafeTimeout(milliseconds: failsafeMs)
        settings.peerID = 42
        self.teacherKey = teacherKey
        let engine = ReceiverEngine<SocketAddress>(mapping: .kit, policy: accept, timeout: .milliseconds(failsafeMs))
        machine = ReceiverMachine(engine: engine, plane: ControlPlane(settings: settings, connection: 0xAAAA, oneShotConnection: 0xBBBB),
                                  board: "sim",
                                  settings: .init(identify: (1, 2, 3, 4), failsafeMilliseconds: failsafeMs, boardSpec: "sim", version: "test",
                                                  records: records),
                                  strangerRate: 1, strangerBurst: strangerBurst, now: start)
        machine.start()
        machine.clearActions()
    }

    func tick(ms: Int) -> Tick { start + Int64(ms) * 1_000_000 }

    /// One wake-up: the datagrams (source, bytes, arrival stamp in ms or none) read at `ms`,
    /// then the wake-up's own work; returns what the machine asked for.
    @discardableResult
    func receive(_ datagrams: [(SocketAddress, [UInt8], Int?)], ms: Int) -> [ReceiverAction] {
        let batch = Batch(items: datagrams.map { ($0.0, $0.1, $0.2.map { tick(ms: $0) }) })
        machine.receive(batch, at: tick(ms: ms), unixMillis: Self.unixMillisAtStart + UInt64(ms))
        machine.wake(at: tick(ms: ms))
        defer { machine.clearActions() }
        return machine.actions
    }

    /// A wake-up with no datagrams.
    func wake(ms: Int) -> [ReceiverAction] {
        machine.wake(at: tick(ms: ms))
        defer { machine.clearActions() }
        return machine.actions
    }

    /// `controller` says hello from `source` and takes the accept (its connection id).
    func hello(_ controller: inout ChannelController, from source: SocketAddress, name: String, ms: Int) {
        let hello = controller.send(.hello(.init(peerID: UInt64(source.port), displayName: WireText(name), pairingCode: WireText(Self.pairingCode))))
        let actions = receive(hello.map { (source, $0, nil) }, ms: ms)
        controller.take(actions.compactMap { if case .send(let d, let to) = $0, to == source { d } else { nil } })
    }

    /// A teacher command signed with the harness's key, for this robot.
    func teacherCommand(_ action: TeacherCommand.Action, argument: String = "", nonce: UInt64) -> [UInt8] {
        var c = TeacherCommand(action: action, unixMillis: Self.unixMillisAtStart, nonce: nonce, session: "class",
                               target: "robot-1", argument: WireText(argument))
        c.sign(key: Array((teacherKey ?? "").utf8))
        return ControlDatagram(header: ControlHeader(type: .teacher, connection: 9), payload: ControlMessage.teacher(c).encodePayload()[...]).encode()
    }

    static func boardWrites(_ actions: [ReceiverAction]) -> [[UInt8: UInt8]] {
        actions.compactMap { if case .board(let values) = $0 { values } else { nil } }
    }

    struct Batch: ReceivedDatagrams {
        var items: [(SocketAddress, [UInt8], Tick?)]

        func forEachDatagram(now: Tick, where include: (SocketAddress) -> Bool,
                             _ body: (SocketAddress, ArraySlice<UInt8>, Int, Tick?) -> Void) {
            for (source, bytes, arrived) in items where include(source) { body(source, bytes[...], bytes.count, arrived) }
        }
    }
}

/// A controller's side of the control plane: a reliable channel, fed what the machine sends it.
struct ChannelController {
    var channel = ReliableChannel(connection: 0xC0C0)

    mutating func send(_ message: ControlMessage) -> [[UInt8]] {
        try? channel.send(message)
        return channel.poll(now: .now).datagrams
    }

    mutating func take(_ datagrams: [[UInt8]]) {
        for bytes in datagrams {
            guard let d = try? ControlDatagram.decode(bytes) else { continue }
            if channel.connectionID != 0, d.header.connectionID != channel.connectionID { continue }
            for event in channel.receive(d, now: .now) {
                if case .delivered(let m) = event, case .accept = m { channel.connectionID = d.header.connectionID }
            }
        }
    }
}

@Suite struct ReceiverMachineBlackBoxTests {
    /// With `--black-box` the machine asks to keep each applied state and the failsafe, and to
    /// write the recorder out on the failsafe; without it, it asks for neither.
    @Test func aFailsafeIsRecordedAndWrittenOnlyWhenRecording() {
        for records in [true, false] {
            let h = MachineHarness(.first, records: records)
            h.receive([(ReceiverMachineTests.a, StatePacket.encode(.neutral), nil)], ms: 10)
            let drive = h.receive([(ReceiverMachineTests.a, StatePacket.encode(ReceiverMachineTests.forward), nil)], ms: 20)
            let trip = h.wake(ms: 300)
            let recorded = (drive + trip).compactMap { if case .record(let e) = $0 { e } else { nil } }
            let written = trip.compactMap { if case .writeBlackBox(let why) = $0 { why } else { nil } }
            if records {
                #expect(recorded.contains(.state(angle: 0, buttons: Buttons.forward.rawValue)))
                #expect(recorded.contains(.failsafe(cause: "silence")))
                #expect(written == ["failsafe"])
            } else {
                #expect(recorded.isEmpty && written.isEmpty)
            }
        }
    }
}
