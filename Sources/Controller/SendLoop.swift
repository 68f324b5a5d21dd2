#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import RemoteWire
import SystemIO

/// The controller's one thread: poll the input, the signal descriptor, the destination's change
/// flag and the next deadline (resend, neutral spacing, the input's own timeout); feed what
/// happened to ``SendSchedule``; do the sends it asks for. No busy polling: the thread sleeps in
/// poll(2) until something is readable or a deadline comes.
package struct SendLoop {
    package let source: any InputSource
    package let destination: Destination
    package let schedule: SendSchedule.Configuration
    package let signals: SignalWatcher
    package let status: StatusLine
    /// Who rides along, serviced in this order after every wake-up: the session follower
    /// (DNS-SD), then the classroom control session.
    package var companions: [any SendLoopCompanion] = []
    /// The classroom control session alone (the usual case).
    package var companion: (any SendLoopCompanion)? {
        get { companions.last }
        set { companions = newValue.map { [$0] } ?? [] }
    }
    /// Whether this loop's state socket is the one the fatal-signal guard sends neutral from
    /// (``FatalSignalGuard`` holds one peer per process). False when one process runs many loops
    /// (`analog-remote web`, one per phone): they would overwrite each other's peer.
    package var armsFatalSignalGuard = true
    /// Told of every state put on the wire, with when (`--record`, ``DriveRecorder``).
    package var onSent: ((ControllerState, ContinuousClock.Instant) -> Void)?

    package init(source: any InputSource, destination: Destination, schedule: SendSchedule.Configuration,
                signals: SignalWatcher, status: StatusLine) {
        self.source = source
        self.destination = destination
        self.schedule = schedule
        self.signals = signals
        self.status = status
    }

    /// Runs until the input ends, a signal arrives or the device is lost; returns why, after the
    /// neutral packets went out. The input source is closed on every way out (also when this
    /// throws: a failing `poll`, or the source refusing to start).
    package func run() throws -> EndReason {
        let sender = StateSender(armsFatalSignalGuard: armsFatalSignalGuard)
        let companion = self.companion
        if let companion { sender.wrap = { [unowned companion] in companion.wrapState($0) } }
        sender.onError = { companion?.sendFailed($0) }
        let colour = Colour.wanted(enabled: status.enabled)
        var state = Running(schedule: SendSchedule(schedule))
        state.onSent = onSent
        defer {
            source.close()
            let peer = destination.current?.address
            for companion in companions { companion.finish(socket: peer.flatMap { try? sender.socket(for: $0) }, peer: peer) }
            sender.close()
            status.clear()
        }
        if let peer = destination.current {
            do {
                try sender.prepare(for: peer.address)
            } catch {
                throw CommandFailure("cannot open a UDP socket for \(peer.description): \(error)", kind: .networkUnavailable)
            }
        }
        // Ctrl-Z / SIGTSTP / SIGCONT (JobControl.swift); without it the controller still runs.
        let jobs = try? JobControl()
        // The clock is read once per wake-up, as a ``Tick`` (what the schedule takes); `now` is the
        // same reading as an instant, for the input sources and companions, which take one.
        var tick = Tick.now()
        var now = tick.instant
        serveCompanion(&state, sender: sender, now: tick) { _ in true }   // a hello goes out before the first state
        // How many descriptors each companion had in this wake-up's poll (kept across turns: no
        // allocation per wake-up).
        var companionCounts: [Int] = []
        companionCounts.reserveCapacity(companions.count)
        state.take(try source.start(now: now), now: tick, status: status)
        state.perform(state.schedule.start(now: tick), sender: sender, destination: destination)

        while state.finished == nil {
            let reading = !state.schedule.isStopping
            var watched: [(fd: Int32, events: Poller.Events)] = []
            watched.reserveCapacity(6 + companions.count)   // one allocation per wake-up, not one per append
            watched.append((destination.changed.descriptor.rawValue, .readable))
            // Once stopping, the signal flag (it stays raised) and the input (it may sit at EOF)
            // would make poll return at once: leave them out.
            if reading { watched.append((signals.readableDescriptor, .readable)) }
            let input = reading ? source.descriptor : nil
            if let input { watched.append((input, .readable)) }
            var deadline = state.schedule.deadline?.instant
            if reading, let d = source.nextDeadline { deadline = deadline.map { min($0, d) } ?? d }
            let companionsIndex = watched.count
            companionCounts.removeAll(keepingCapacity: true)
            for companion in companions {
                if let d = companion.nextDeadline { deadline = deadline.map { min($0, d) } ?? d }
                let descriptors = companion.descriptors
                companionCounts.append(descriptors.count)
                for fd in descriptors { watched.append((fd, .readable)) }
            }
            let second = reading ? source.secondDescriptor : nil
            let secondIndex = watched.count
            if let second { watched.append((second, .readable)) }
            let jobsIndex = watched.count
            if reading, let jobs { watched.append((jobs.descriptor, .readable)) }

            let ready = try Poller.wait(watched, until: deadline)
            tick = Tick.now()
            now = tick.instant
            func companionReadable(_ k: Int) -> Bool {
                // A companion that had nothing to poll (not attached yet) is not known idle.
                let start = companionsIndex + companionCounts[..<k].reduce(0, +)
                let count = companionCounts[k]
                return count == 0 || ready[start..<(start + count)].contains { !$0.isEmpty }
            }
            // A peer the companions have not met (the destination moved) meets them before any
            // state goes to it: the control session's hello goes out, and pairing or `--secret`
            // hold states back until it is accepted.
            let newPeer = !companions.isEmpty && destination.current?.address != state.servedPeer
            if newPeer { serveCompanion(&state, sender: sender, now: tick, readable: companionReadable) }

            if !ready[0].isEmpty {
                destination.changed.clear()
                state.schedule.setPeriod(destination.current?.period ?? schedule.period)
                state.perform(state.schedule.sendNow(now: tick), sender: sender, destination: destination)
            }
            if reading, !ready[1].isEmpty {
                state.take([.end(.signal(signals.signal ?? SIGTERM))], now: tick, status: status)
            }
            let secondReady = second != nil && !ready[secondIndex].isEmpty
            if input != nil, !state.schedule.isStopping, !ready[2].isEmpty || secondReady {
                state.take(source.read(now: now), now: tick, status: status)
                // The input's state goes out before the companions are served: they cost a
                // system call or more each wake-up, and the state is what the driver waits for.
                // Whether states may go out (`holdStates`: pairing, `--secret`) changes only in
                // `serveCompanion`, and the companions have met this peer (`newPeer`), so it was
                // decided on the turn before; what they read now (an accept, a stop) applies from
                // here on.
                if !state.pending.isEmpty { state.perform([], sender: sender, destination: destination) }
            }
            if !newPeer { serveCompanion(&state, sender: sender, now: tick, readable: companionReadable) }
            if reading, let jobs, ready.count > jobsIndex, !ready[jobsIndex].isEmpty {
                let (stop, cont) = jobs.take()
                if stop { state.suspendRequested = true }
                if cont, !state.schedule.isStopping { resume(&state, sender: sender, now: tick) }
            }
            if state.suspendRequested, let jobs, !state.schedule.isStopping {
                state.suspendRequested = false
                suspend(&state, sender: sender, jobs: jobs)
                tick = Tick.now()
                now = tick.instant
                resume(&state, sender: sender, now: tick)
            }
            if !state.schedule.isStopping, let d = source.nextDeadline, d <= now {
                state.take(source.deadlinePassed(now: now), now: tick, status: status)
            }
            state.perform(state.schedule.advance(now: tick), sender: sender, destination: destination)
            // Only with a status line: the companions' parts are strings built on every wake-up.
            if status.enabled {
                state.report(now: now, status: status, sender: sender, destination: destination, input: source.name,
                             lead: companions.lazy.compactMap { $0.lead(now: now, colour: colour) }.first,
                             extra: companions.flatMap(\.statusParts))
            }
        }
        return state.finished ?? .endOfInput
    }

    /// Ctrl-Z or SIGTSTP: neutral ×3 (the robot must not drive on while we are stopped), the
    /// terminal back to the shell, then stop; returns once continued.
    private func suspend(_ state: inout Running, sender: StateSender, jobs: JobControl) {
        if let peer = destination.current, !state.holdStates {
            for i in 0..<3 {
                if i > 0 { usleep(5000) }
                sender.send(.neutral, to: peer.address)
            }
        }
        source.suspend()
        status.clear()
        if status.enabled { status.printAbove("control: suspended (neutral sent); `fg` resumes") }
        jobs.stopProcess()
        // The SIGCONT that woke us: resumed by the caller, not twice.
        if jobs.takeContinue() { state.suspendRequested = true }
    }

    /// SIGCONT: the source takes its terminal again, and the current state goes out at once.
    private func resume(_ state: inout Running, sender: StateSender, now: Tick) {
        state.take(source.resume(now: now.instant), now: now, status: status)
        state.perform(state.schedule.sendNow(now: now), sender: sender, destination: destination)
    }

    /// Lets each companion read and send on its descriptors, then does what it asks.
    /// `readable(k)`: whether poll saw companion `k`'s descriptors readable this wake-up.
    private func serveCompanion(_ state: inout Running, sender: StateSender, now tick: Tick,
                                readable: (Int) -> Bool) {
        guard !companions.isEmpty else { return }
        let now = tick.instant
        var actions: [CompanionAction] = []
        for (k, companion) in companions.enumerated() {
            // Each sees the destination as the companions before it left it.
            let peer = destination.current?.address
            actions += companion.service(socket: peer.flatMap { try? sender.socket(for: $0) }, peer: peer, now: now,
                                         readable: readable(k))
        }
        state.holdStates = !companions.allSatisfy { $0.allowsStates }   // a closure, not a key path: every wake-up
        state.servedPeer = destination.current?.address
        for action in actions {
            switch action {
            case .sendNow: state.perform(state.schedule.sendNow(now: tick), sender: sender, destination: destination)
            case .end(let reason): state.take([.end(reason)], now: tick, status: status)
            }
        }
    }

    /// The loop's mutable part.
    struct Running {
        var schedule: SendSchedule
        var finished: EndReason?
        var pending: [SendSchedule.Action] = []
        var meter = RateMeter()
        var lastReport: ContinuousClock.Instant?
        /// States are not sent while the companion holds them (a paired hello not yet accepted).
        var holdStates = false
        /// The destination the companions were last served with (``holdStates`` is about it).
        var servedPeer: SocketAddress?
        /// Ctrl-Z from the input: suspend at the end of this turn.
        var suspendRequested = false
        var onSent: ((ControllerState, ContinuousClock.Instant) -> Void)?

        /// Feeds input events to the schedule; the resulting actions wait in ``pending``.
        mutating func take(_ events: [InputEvent], now: Tick, status: StatusLine) {
            for event in events {
                switch event {
                case .state(let s): pending += schedule.update(s, now: now)
                case .end(let reason): pending += schedule.stop(reason, now: now)
                case .notice(let text): status.printAbove(text)
                case .suspend: suspendRequested = true
                }
            }
        }

        mutating func perform(_ actions: [SendSchedule.Action], sender: StateSender, destination: Destination) {
            let all = pending + actions
            pending.removeAll()
            for action in all {
                switch action {
                case .send(let s):
                    guard !holdStates, let peer = destination.current else { continue }
                    if sender.send(s, to: peer.address) {
                        let at = ContinuousClock.now
                        meter.record(at)
                        onSent?(s, at)
                        destination.sent(to: peer)
                    }
                case .finish(let reason):
                    finished = reason
                }
            }
        }

        /// Redraws the status line at most ten times a second (the loop wakes up to 1000 times).
        mutating func report(now: ContinuousClock.Instant, status: StatusLine, sender: StateSender,
                             destination: Destination, input: String, lead: String? = nil, extra: [String] = []) {
            guard status.enabled else { return }
            if let lastReport, now - lastReport < .milliseconds(100), finished == nil { return }
            lastReport = now
            status.update(StatusReport.line(peer: destination.current, note: destination.note, state: schedule.current,
                                            rate: meter.rate(now: now), input: input,
                                            stopping: schedule.isStopping, sendError: Self.describe(sender.lastError, peer: destination.current),
                                            lead: lead, extra: extra))
        }

        /// `no receiver at HOST:PORT` for ECONNREFUSED (nothing listens there), else the reason.
        static func describe(_ error: SystemError?, peer: Destination.Peer?) -> String? {
            guard let error else { return nil }
            if error.errno == ECONNREFUSED, let peer { return "no receiver at \(peer.address)" }
            return error.reason
        }
    }
}
