import BoardLink
import ControlPlane
import Receiver
import SystemIO
import RemoteWire

/// A clock that moves only when a test says so: the state machines take instants or ticks, so a test
/// walks time in exact steps instead of sleeping.
///
/// The harnesses below are classes so that a mutating call can sit inside `#expect(…)` (the
/// macro cannot mutate a struct it captured); each call takes the time in ms since `start`.
final class ManualClock {
    let start = ContinuousClock.now
    private(set) var now: ContinuousClock.Instant

    init() { now = start }

    func advance(ms: Int) { now += .milliseconds(ms) }
    /// Sets the time to `start + ms` and returns it.
    func at(ms: Int) -> ContinuousClock.Instant {
        now = start + .milliseconds(ms)
        return now
    }
    func instant(ms: Int) -> ContinuousClock.Instant { start + .milliseconds(ms) }
    /// ``at(ms:)`` as a ``Tick`` (what the receive engine takes).
    func tick(ms: Int) -> Tick { Tick(at(ms: ms)) }
    /// ``instant(ms:)`` as a ``Tick``.
    func instantTick(ms: Int) -> Tick { Tick(instant(ms: ms)) }
}

final class FailsafeHarness {
    let clock = ManualClock()
    var machine: Failsafe

    init(timeoutMs: Int = 250) { machine = Failsafe(timeout: .milliseconds(timeoutMs)) }

    func state(resting: Bool, ms: Int) -> Failsafe.Verdict { machine.state(resting: resting, at: clock.at(ms: ms)) }
    func tick(ms: Int) -> Bool { machine.tick(at: clock.at(ms: ms)) }
    func trip(_ reason: Failsafe.Reason) -> Bool { machine.trip(reason) }
}

final class OwnershipHarness {
    let clock = ManualClock()
    var machine: Ownership<String>

    init(_ policy: AcceptMode, timeoutMs: Int = 250) {
        machine = Ownership(policy: policy, timeout: .milliseconds(timeoutMs))
    }

    func offer(_ source: String, ms: Int) -> Ownership<String>.Verdict { machine.offer(from: source, at: clock.at(ms: ms)) }
    func expire(ms: Int) -> String? { machine.expire(at: clock.at(ms: ms)) }
}

final class EngineHarness {
    typealias Engine = ReceiverEngine<String>
    let clock = ManualClock()
    var engine: Engine

    init(_ policy: AcceptMode = .first, timeoutMs: Int = 250, capacity: Int = 1024, mapping: Mapping = .kit,
         reclaimMs: Int = 0) {
        engine = Engine(mapping: mapping, policy: policy, timeout: .milliseconds(timeoutMs), capacity: capacity,
                        reclaim: .milliseconds(reclaimMs))
    }

    func start() -> Engine.Step { engine.start() }

    /// A state read at `readMs` that arrived (kernel stamp) at `arrivedMs`.
    func send(_ state: ControllerState, from source: String, arrivedMs: Int, readMs: Int) -> Engine.Step {
        let bytes = StatePacket.encode(state)
        _ = clock.at(ms: readMs)
        return engine.datagram(bytes, length: bytes.count, from: source, at: clock.instantTick(ms: readMs),
                               arrived: clock.instantTick(ms: arrivedMs))
    }

    func send(_ state: ControllerState, from source: String, ms: Int) -> Engine.Step {
        let bytes = StatePacket.encode(state)
        return engine.datagram(bytes, length: bytes.count, from: source, at: clock.tick(ms: ms))
    }

    /// Raw bytes at the current time (or `ms` if given).
    func send(raw bytes: [UInt8], from source: String, ms: Int? = nil) -> Engine.Step {
        let t = ms.map { clock.tick(ms: $0) } ?? Tick(clock.now)
        return engine.datagram(bytes, length: bytes.count, from: source, at: t)
    }

    func tick(ms: Int) -> Engine.Step { engine.tick(at: clock.tick(ms: ms)) }
    func boardLink(_ event: BoardEvent, ms: Int) -> Engine.Step { engine.boardLink(event, at: clock.tick(ms: ms)) }
    func shutdown() -> [UInt8: UInt8] { engine.shutdown() }
}
