import BoardLink
import ControlPlane
import RemoteWire
import SystemIO

/// The whole receiver decision path without I/O: datagram → counters → ownership → failsafe →
/// mapping → the values to hand to the board. The service loop feeds it datagrams, board
/// events and the time, and does what the returned ``Step`` says.
///
/// Guarantees (tests pin each one):
/// - only a valid state (8 bytes, finite angle) from the owner can change what goes to the board;
/// - nothing else refreshes liveness;
/// - after start-up, silence, or a board link event, the robot moves again only after a
///   resting state (``Mapping/isResting(_:)``);
/// - a write is produced only when a value changes (``Step/write`` is then every value the
///   mapping controls, so a board link that replaces rather than merges still gets them all).
package struct ReceiverEngine<Source: Hashable & Sendable>: Sendable {
    package private(set) var mapping: Mapping
    package private(set) var ownership: Ownership<Source>
    package private(set) var failsafe: Failsafe
    package private(set) var controllers: ControllerTable<Source>
    package private(set) var counters = ReceiverCounters()
    /// The values last handed to the board (every address the mapping controls once started).
    package private(set) var board: [UInt8: UInt8] = [:]
    /// Logical wheel speeds last handed to the board (forward positive).
    package private(set) var wheels = WheelSpeeds(left: 0, right: 0)
    /// The state last applied; nil after a stop (so the next state is mapped afresh).
    package private(set) var applied: ControllerState?
    /// A teacher's stop-all holds the robot at rest: every state is `held` until the release
    /// (Protocol.md §7.6), and after it the failsafe waits for a resting state.
    package private(set) var stoppedByTeacher = false
    private var announcedHold = false

    package struct WheelSpeeds: Sendable, Equatable {
        package var left: Int
        package var right: Int

        package init(left: Int, right: Int) {
            self.left = left
            self.right = right
        }
    }

    /// Something worth a log line. The engine reports "once per source" notices only the first
    /// time for each source it has a record of.
    package enum Notice: Sendable, Equatable {
        case tookOwnership(Source, previous: Source?)
        case ownerSilent(Source)
        /// First valid state from a source while another owns the robot.
        case ignored(Source, owner: Source)
        /// First refused 8-byte packet from a source.
        case bad(Source, StatePacketError)
        /// First datagram of another size (a control message, not understood yet) from a source.
        case control(Source, length: Int)
        /// The failsafe tripped while driving: motors set to 0.
        case failsafe(Failsafe.Reason)
        /// The owner sends states that would move the robot while the failsafe is on (once per trip).
        case holding(Source)
        /// A resting state lifted the failsafe.
        case resumed(Source)
        /// First valid state from a source that may not drive (`--accept paired`, no pairing).
        case notAdmitted(Source)
        /// The owner said bye: motors 0, the robot is free.
        case ownerLeft(Source)
        /// A teacher's stop-all was taken (true) or released (false).
        case teacher(stopped: Bool)
    }

    package struct Step: Sendable, Equatable {
        /// Hand these to the board (`BoardSink.setDesired`), or nothing to do.
        package var write: [UInt8: UInt8]?
        package var notices: [Notice] = []

        package init(write: [UInt8: UInt8]? = nil, notices: [Notice] = []) {
            self.write = write
            self.notices = notices
        }
    }

    package init(mapping: Mapping, policy: AcceptMode, timeout: Duration, capacity: Int = 1024,
                reclaim: Duration = .zero) {
        self.mapping = mapping
        ownership = Ownership(policy: policy, timeout: timeout, reclaim: reclaim)
        failsafe = Failsafe(timeout: timeout)
        controllers = ControllerTable(capacity: capacity)
    }

    /// The earliest time ``tick(at:)`` has something to do, or nil (wait for packets only).
    package var deadlineTick: Tick? {
        switch (failsafe.deadlineTick, ownership.deadlineTick) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
    }

    /// Start-up: the board is set to rest (motors 0, bound outputs released).
    package mutating func start() -> Step {
        Step(write: hand(mapping.restValues))
    }

    /// Deadlines: failsafe on silence, ownership lapse.
    package mutating func tick(at now: Tick) -> Step {
        var step = Step()
        if failsafe.tick(at: now) {
            counters.failsafeTrips += 1
            step.notices.append(.failsafe(.silence))
            stop(into: &step)
        }
        if let released = ownership.expire(at: now) {
            step.notices.append(.ownerSilent(released))
        }
        return step
    }

    /// A datagram from `source` dropped undecoded by the rate limit: counted, nothing else (it
    /// is not a sign of life).
    package mutating func limited(from source: Source, at now: Tick) {
        counters.datagrams += 1
        counters.limited += 1
    }

    /// The controller `source` said bye. If it owns the robot: motors 0 at once, the robot is
    /// free for the next controller, which must rest first (like after silence).
    package mutating func released(_ source: Source, at now: Tick) -> Step {
        var step = tick(at: now)
        guard ownership.owner == source else { return step }
        ownership.release()
        step.notices.append(.ownerLeft(source))
        failsafe.trip(.released)
        stop(into: &step)
        return step
    }

    /// The controller at `old` now talks from `new` (its control connection recognised it):
    /// if it owns the robot it stays the owner — no failsafe, no resting state needed.
    package mutating func moved(from old: Source, to new: Source, at now: Tick) -> Step {
        ownership.move(from: old, to: new)
        return tick(at: now)
    }

    /// A teacher's stop-all (`stop` true) or its release. Stop: the rest values (motors 0, every
    /// bound output off) go to the board at once and every state is held until the release.
    /// Release: the failsafe waits for a resting state, as after silence.
    package mutating func teacher(stop: Bool, at now: Tick) -> Step {
        var step = tick(at: now)
        guard stop != stoppedByTeacher else { return step }
        stoppedByTeacher = stop
        step.notices.append(.teacher(stopped: stop))
        if stop {
            failsafe.trip(.teacher)
            announcedHold = false
            applied = nil
            wheels = WheelSpeeds(left: 0, right: 0)
            if let write = hand(mapping.restValues) { step.write = write }
        }
        return step
    }

    /// One datagram of `length` bytes (`bytes` may be a truncated prefix of it) from `source`.
    /// `admitted` false: a valid state from it is `ignored` whoever owns the robot (an unpaired
    /// source under `--accept paired`).
    ///
    /// `arrived`: when the datagram reached the host (the kernel's stamp), if known. The
    /// failsafe and the ownership judge the controller's silence by it — a state that waited in
    /// the queue while this process was not scheduled arrived in time — and everything else by
    /// `now`. Both by the same time: judged by `now`, the ownership would outlast the failsafe
    /// by the queueing delay, and a second controller that starts once the motors stopped for
    /// silence would be ignored for that long.
    package mutating func datagram(_ bytes: some Collection<UInt8>, length: Int, from source: Source,
                                  at now: Tick, arrived: Tick? = nil,
                                  admitted: Bool = true) -> Step {
        let judged = arrived.map { min($0, now) } ?? now
        var step = tick(at: judged)
        counters.datagrams += 1
        guard length == StatePacket.size, bytes.count == length else {
            counters.control += 1
            controllers.touch(source, at: now, protecting: ownership.owner) { record in
                record.count(at: now)
                record.control += 1
                if !record.loggedControl {
                    record.loggedControl = true
                    step.notices.append(.control(source, length: length))
                }
            }
            return step
        }
        let state: ControllerState
        do {
            state = try StatePacket.decode(bytes)
        } catch {
            counters.bad += 1
            controllers.touch(source, at: now, protecting: ownership.owner) { record in
                record.count(at: now)
                record.bad += 1
                if !record.loggedBad {
                    record.loggedBad = true
                    step.notices.append(.bad(source, error))
                }
            }
            return step
        }
        counters.states += 1
        guard admitted else {
            counters.ignored += 1
            controllers.touch(source, at: now, protecting: ownership.owner) { record in
                record.count(at: now)
                record.states += 1
                record.lastState = state
                record.ignored += 1
                if !record.loggedIgnored {
                    record.loggedIgnored = true
                    step.notices.append(.notAdmitted(source))
                }
            }
            return step
        }
        let verdict = ownership.offer(from: source, at: judged)
        controllers.touch(source, at: now, protecting: ownership.owner) { record in
            record.count(at: now)
            record.states += 1
            record.lastState = state
            if case .ignored(let owner) = verdict {
                record.ignored += 1
                if !record.loggedIgnored {
                    record.loggedIgnored = true
                    step.notices.append(.ignored(source, owner: owner))
                }
            }
        }
        switch verdict {
        case .ignored:
            counters.ignored += 1
            return step
        case .tookOwnership(let previous):
            step.notices.append(.tookOwnership(source, previous: previous))
        case .accepted:
            break
        }
        if stoppedByTeacher {
            counters.held += 1
            return step
        }
        switch failsafe.state(resting: mapping.isResting(state), at: judged) {
        case .hold:
            counters.held += 1
            if !announcedHold {
                announcedHold = true
                step.notices.append(.holding(source))
            }
            return step
        case .resume:
            announcedHold = false
            step.notices.append(.resumed(source))
        case .drive:
            break
        }
        counters.applied += 1
        if state != applied {
            applied = state
            let (l, r) = mapping.wheelSpeeds(for: state)
            wheels = WheelSpeeds(left: l, right: r)
            step.write = hand(mapping.values(left: l, right: r, buttons: state.buttons))
        }
        return step
    }

    /// The board link dropped or came back: whatever the board holds is unknown, so stop and
    /// require a resting state again.
    package mutating func boardLink(_ event: BoardEvent, at now: Tick) -> Step {
        var step = tick(at: now)
        switch event {
        case .connected:
            return step
        case .disconnected, .reconnected, .refused:
            if failsafe.trip(.boardLink) { counters.failsafeTrips += 1 }
            step.notices.append(.failsafe(.boardLink))
            var stopped = Step()
            stop(into: &stopped)
            // Hand the full set even if unchanged: a reconnected board starts from its own state.
            if stopped.write == nil { counters.boardWrites += 1 }
            step.write = board
            return step
        }
    }

    /// Exit: the values to leave on the board (rest: motors 0, bound outputs released).
    package mutating func shutdown() -> [UInt8: UInt8] {
        failsafe.trip(.startup)
        ownership.release()
        applied = nil
        wheels = WheelSpeeds(left: 0, right: 0)
        _ = hand(mapping.restValues)
        return board
    }

    /// A new mapping while running (`systemctl reload`). The owner keeps the robot, but the old
    /// mapping's rest values go out first (motors 0 and bound outputs off at its addresses, which
    /// the new one may not control) and it drives again only after a resting state — as after a
    /// board link event. An equal mapping changes nothing.
    package mutating func replaceMapping(_ new: Mapping, at now: Tick) -> Step {
        var step = tick(at: now)
        guard new != mapping else { return step }
        let rest = mapping.restValues
        if failsafe.trip(.reloaded) { counters.failsafeTrips += 1 }
        announcedHold = false
        applied = nil
        wheels = WheelSpeeds(left: 0, right: 0)
        mapping = new
        var combined = rest
        for (address, value) in new.restValues { combined[address] = value }
        if let write = hand(combined) { step.write = write }
        return step
    }

    private mutating func stop(into step: inout Step) {
        announcedHold = false
        applied = nil
        wheels = WheelSpeeds(left: 0, right: 0)
        if let write = hand(mapping.stopValues) { step.write = write }
    }

    /// Merges `values` into ``board``; returns the full set if anything changed.
    private mutating func hand(_ values: [UInt8: UInt8]) -> [UInt8: UInt8]? {
        var changed = false
        for (address, value) in values where board[address] != value {
            board[address] = value
            changed = true
        }
        guard changed else { return nil }
        counters.boardWrites += 1
        return board
    }
}
