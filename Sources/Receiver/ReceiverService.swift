#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardProtocol
import Console
import BoardLink
import ControlPlane
import Discovery
import Logging
import RemoteWire
import SystemIO

/// What `analog-remote receive` was asked to do (the CLI validates, this only carries).
package struct ReceiverConfiguration: Sendable {
    /// 0 = any free port (printed at start-up).
    package var port: UInt16 = 0
    /// Who may drive (`--accept`), pairing, teacher key, rate limit: the control plane (Protocol.md §7).
    package var classroom = ClassroomSettings()
    package var failsafe = FailsafeTimeout.standard
    package var mapping: Mapping = .kit
    /// False with `--no-advertise` (the service is then given no ``ReceiverAdvertising``).
    package var advertise = true
    /// How long exit waits for the board to confirm the safe state.
    package var safeStateTimeout: Duration = .seconds(1)
    /// Most datagrams read per wake-up (the socket is drained until EAGAIN or this many) before
    /// signals and deadlines are looked at again.
    package var batch = 1024
    /// Drain pacing (``DrainPacing``): above `busyRate` datagrams/s the socket is read after a
    /// pause that grows with the rate up to `drainPause` (reached at twice `busyRate`); 0 reads
    /// it on every wake-up.
    package var drainPause: Duration = .milliseconds(1)
    /// The failsafe judges states by when they arrived (kernel stamps, Protocol.md §3.3); false
    /// judges by read time (a benchmark hook's comparison only).
    package var arrivalStamps = true
    package var busyRate: Double = DrainPacing.defaultBusyRate
    /// After a failsafe caused by silence, the robot stays reserved for its owner this long
    /// (`--reclaim-s`), so no other source — a flood's least of all — can take it meanwhile.
    package var reclaim: Duration = .seconds(ReceiverConfiguration.defaultReclaimSeconds)
    /// All datagrams of sources other than the owner together (`first`/`paired` only): per second
    /// and burst, checked before the per-source limit. Far above a classroom (64 controllers ×
    /// 100 Hz = 6,400/s), far below a flood.
    package var strangerRate: Double = 20_000
    package var strangerBurst: Double = 4_000
    /// Source addresses tracked at once (the stalest are evicted beyond it).
    package var controllerCapacity = 1024
    /// The board as drivers are told it in robot-state reports (Protocol.md §7.9).
    package var boardName = "sim"
    /// The software version, told to the teacher's dashboard.
    package var version = ""
    /// systemd's notify socket (`Type=notify`, `WatchdogSec=`), or nil when not run by it.
    package var notifier: ServiceNotifier?
    /// SIGHUP (`systemctl reload`) reads the configuration again through this; nil = SIGHUP
    /// keeps its default action.
    package var reloader: ReceiverReloader?
    /// Where each reload leaves its ``ReloadReceipt`` (systemd's `$RUNTIME_DIRECTORY`); nil: none.
    package var reloadReceipts: SafeDirectory?
    /// Test hook only (`ANALOG_REMOTE_TEST_STALL_AFTER_MS`): the loop stops serving after this
    /// long, so a test can see the watchdog keep-alives stop.
    package var stallAfter: Duration?
    /// The `receiving on udp port N` and `summary …` lines on stdout (the CLI's contract); off
    /// for a receiver embedded in someone else's program.
    package var writesStandardOutput = true
    /// The signals that stop the receiver (as ``ReceiverService/stop()`` does).
    package var stopSignals: [Int32] = [SIGINT, SIGTERM]
    /// `--black-box DIR`: keep the last seconds in memory, write them on trouble (``BlackBox``).
    package var blackBox: BlackBoxSettings?

    package init() {}

    package static let defaultReclaimSeconds = 3
    package static let reclaimRange = 0...60
}

/// The receive loop: one thread on a ``LoopRunner`` (one `poll` over the UDP socket, the stop
/// and the board link's events), with the machine's next deadline as the timeout. No busy
/// polling: with no packets and no status line it sleeps until the deadline or an event. What
/// a wake-up means is ``ReceiverMachine``'s; this class reads the socket, performs the
/// machine's actions (board, replies, log lines) and serves the service manager.
///
/// Exit paths — SIGINT/SIGTERM, and any error in the loop — all leave through
/// ``ReceiverService/finish(_:)``, which writes the rest values and the board's safe state
/// before the process exits.
package final class ReceiverService {
    let configuration: ReceiverConfiguration
    let socket: UDPSocket
    /// The loop's poll, its stop (the stop signals, or ``stopper``), and its mailbox: the board
    /// link's events (``BoardEventInbox``).
    let runner: LoopRunner<BoardEvent>
    let board: any BoardSink
    let status: StatusLine
    let logger: Logger
    let advertising: ReceiverAdvertising?
    let supervision: ServiceSupervision
    /// The board the start-up probe found and what is driven on it (profile, firmware id and
    /// version, map size, mapping); nil for a board that is not probed.
    package let boardResolution: BoardResolution?
    /// Set while the board is refused (a different board on reconnect, a dropped write).
    private(set) var boardRefusal: String?
    /// Everything the receiver decides (ReceiverMachine.swift); this class performs its actions.
    var machine: ReceiverMachine
    /// One wake-up's datagrams (DatagramDrain.swift).
    var drain: DatagramDrain
    var pacing: DrainPacing
    /// Rate limits the one line this class writes per source (a reply the socket refused).
    private var sendNotices = NoticeLimiter()
    /// `--black-box`: the flight recorder (ReceiverService+BlackBox.swift).
    let blackBox: BlackBox?
    /// Status refresh period while a status line is shown; no periodic wake-ups otherwise.
    private let statusPeriod: Duration = .milliseconds(200)

    /// Sets everything up in the order that keeps the board safe: signals first (so a SIGTERM
    /// during start-up still ends cleanly), then the port (a busy port must not touch the
    /// board), then the DNS-SD announcement of that port (no mDNS responder must not touch it
    /// either), then the board.
    package init(configuration: ReceiverConfiguration, status: StatusLine, logger: Logger,
                advertising: ReceiverAdvertising? = nil,
                openBoard: (BoardEventInbox) throws(CommandFailure) -> any BoardSink) throws {
        self.configuration = configuration
        self.status = status
        self.logger = logger
        self.advertising = advertising
        do {
            runner = try LoopRunner(stopOn: configuration.stopSignals, mailboxCapacity: 64)
            supervision = try ServiceSupervision(notifier: configuration.notifier, reloader: configuration.reloader,
                                                 receipts: configuration.reloadReceipts, stallAfter: configuration.stallAfter)
        } catch {
            throw CommandFailure("cannot set up signal handling: \(error)", kind: .failed)
        }
        // A black box that cannot write is said, not fatal: the robot must drive without one.
        do {
            blackBox = try configuration.blackBox.map { settings throws(SafeFileError) in try BlackBox(settings: settings, logger: logger) }
        } catch {
            logger.error("--black-box: \(error) (give a directory the receiver may write); running without a black box")
            blackBox = nil
        }
        do {
            socket = try UDPSocket.bind(port: configuration.port)
        } catch {
            let hint = error.errno == EADDRINUSE ? " (another receiver on this machine? choose another --port, or --port 0 for any free port)"
                : error.errno == EACCES ? " (ports below 1024 need root; choose --port 1024 or above)" : ""
            throw CommandFailure("\(error)\(hint)", kind: .networkUnavailable)
        }
        // Made before the announcement: TXT `peer=` is the id the accept carries (Protocol.md §6.2).
        let plane = Self.makeControlPlane(configuration)
        if let advertising {
            do {
                try advertising.start(port: socket.localAddress().port, peer: FNV1a64.hex(plane.settings.peerID))
            } catch let error as DiscoveryError {
                throw error
            } catch {
                throw CommandFailure("\(error)", kind: .networkUnavailable)
            }
        }
        do {
            // 1 MiB instead of the usual 208 KiB: a flood from one source must reach our rate limit
            // rather than fill the kernel's queue and drop the owner's packets with it. Best effort
            // (capped by net.core.rmem_max).
            try? socket.setReceiveBufferSize(1 << 20)
            // Arrival stamps for the failsafe (receiveBatch). Should the option be refused, a
            // late wake-up judges by read time, which only errs towards stopping.
            if configuration.arrivalStamps { try? socket.enableArrivalTimestamps() }
            board = try openBoard(runner.mailbox)
        } catch {
            advertising?.stop()
            throw error
        }
        boardResolution = board.resolution
        let engine = ReceiverEngine<SocketAddress>(mapping: board.resolution?.mapping ?? configuration.mapping,
                                                   policy: configuration.classroom.accept, timeout: configuration.failsafe.duration,
                                                   capacity: configuration.controllerCapacity, reclaim: configuration.reclaim)
        let profile = board.resolution?.profile ?? .kit
        let settings = ReceiverMachine.Settings(identify: (profile.led1, profile.led2, profile.buzzerTone, profile.buzzerTime),
                                                failsafeMilliseconds: configuration.failsafe.milliseconds,
                                                boardSpec: configuration.boardName, version: configuration.version,
                                                logLevel: logger.logLevel, records: blackBox != nil)
        // The board as drivers are told it: the probed profile and firmware, else the --board spec.
        machine = ReceiverMachine(engine: engine, plane: plane,
                                  board: board.resolution.map { "\($0.kind.rawValue) profile, \($0.identity.summary)" } ?? configuration.boardName,
                                  settings: settings, strangerRate: configuration.strangerRate,
                                  strangerBurst: configuration.strangerBurst, now: .now())
        drain = DatagramDrain(capacity: configuration.batch)
        pacing = DrainPacing(maxPause: configuration.drainPause, busyRate: configuration.busyRate)
    }

    /// The UDP port the receiver listens on (the one chosen for `port` 0).
    package var port: UInt16? { try? socket.localAddress().port }

    /// Ends ``run()`` as SIGTERM would (rest values, safe state, goodbye) when called, from any
    /// thread, also while `run()` blocks its own.
    package var stopper: @Sendable () -> Void {
        { [runner] in runner.requestStop(as: SIGTERM) }
    }

    /// Runs until a signal; returns the exit status (success when stopped on request).
    package func run() throws(CommandFailure) -> CommandOutcome {
        let port: UInt16
        do {
            port = try socket.localAddress().port
        } catch {
            return try finish(CommandFailure("\(error)", kind: .networkUnavailable))
        }
        if configuration.writesStandardOutput { StandardOutput.write("receiving on udp port \(port)\n") }
        if let board = boardResolution {
            logger.notice("board: \(board.kind.rawValue) profile, \(board.identity.summary) (product \(board.identity.productID), version \(board.identity.version))",
                          metadata: ["map": "\(board.identity.addressRange)"])
        }
        logger.info("receiving", metadata: [
            "port": "\(port)", "accept": "\(acceptLabel)",
            "failsafe_ms": "\(configuration.failsafe.milliseconds)",
            "advertise": "\(advertising.map { "session \($0.options.session)" } ?? "off")",
            "robot": "\(machine.plane.settings.robotID.map(\.text) ?? "none")",
        ])
        announceClassroom()
        machine.start()
        perform()
        do {
            try loop()
        } catch {
            return try finish(CommandFailure("receive loop failed: \(error)", kind: .failed))
        }
        supervision.send(["STOPPING=1"], logger: logger)
        let stop = runner.stop
        let name = stop == SIGINT ? "SIGINT" : stop == SIGTERM ? "SIGTERM" : "signal \(stop ?? 0)"
        logger.notice("stopping on \(name)")
        return try finish(nil)
    }

    private func loop() throws(SystemError) {
        // The runner polls its stop and mailbox beside these; `ready` is in this order.
        let fds: [(fd: Int32, events: Poller.Events)] = [(socket.descriptor.rawValue, .readable)]
            + supervision.descriptors + blackBoxDescriptors
        // Every turn of this loop is a wake-up of the thread, and at 64 controllers there are
        // thousands a second: a turn with nothing to do must cost little (BENCHMARKS.md). So the
        // clock is read once after the wait and once after the drain, as a ``Tick``, and the
        // machine is asked cheap questions first.
        var now = Tick.now()
        var nextStatus = now
        let statusPeriod = Tick.nanoseconds(self.statusPeriod)
        while true {
            var deadline = machine.deadline(now: now)
            if status.enabled { deadline = Self.earliest(deadline, nextStatus) }
            deadline = supervision.deadline(deadline, now: now)
            if let hold = pacing.holdUntil(now: now) {
                // Busy: let more datagrams queue for one drain (at most `drainPause`; a sleep, not
                // a poll without the socket, because poll's timeout is in whole milliseconds).
                Self.sleep(until: deadline.map { min($0, hold) } ?? hold)
            }
            let wake = try runner.wait(fds, until: deadline)
            if wake.stop != nil { return }
            now = wake.now
            // What the board sensed, for this wake-up's reports (the board link's thread reads it).
            machine.latestSensors = board.sensors
            let ready = wake.ready
            for event in wake.events {
                log(event)
                recordBlackBox(event)
                machine.boardLink(event, at: now)
                perform()
            }
            if !ready[0].isEmpty || machine.mustReadBeforeTick(at: now) {
                try drain.fill(from: socket)
                // The batch's one clock reading: every datagram is handled at it (the failsafe
                // judges each state by its arrival stamp).
                now = Tick.now()
                machine.receive(drain, at: now, unixMillis: WallClock.unixMillis(drain.wall))
                perform()
                pacing.drained(drain.count, at: now)
            }
            machine.wake(at: now)
            perform()
            recordBlackBoxSensors()
            if supervision.takeHangup(ready[1...]) { reload(at: now) }
            serviceBlackBox(ready)
            if supervision.shouldStall(at: now) { try stall(); return }
            supervision.tick(at: now, isReady: { isReady }, linkStale: { staleLink(at: now) }, status: readyStatus, logger: logger)
            if status.enabled && now >= nextStatus {
                status.update(statusText())
                nextStatus = now + statusPeriod
            }
        }
    }

    private static func earliest(_ a: Tick?, _ b: Tick?) -> Tick? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Does what the machine asked, in order, and empties its list.
    func perform() {
        let count = machine.actions.count
        guard count > 0 else { return }
        for i in 0..<count {
            switch machine.actions[i] {
            case .board(let values):
                board.setDesired(values)
            case .send(let datagram, let to):
                do {
                    _ = try socket.send(datagram, to: to)
                } catch {
                    if logger.logLevel <= .debug, let suppressed = sendNotices.allow(at: Tick.now()) {
                        logger.debug("datagram not sent: \(error)", metadata: ["to": "\(to)", "suppressed": "\(suppressed)"])
                    }
                }
            case .log(let level, let message, let metadata):
                logger.log(level: level, message, metadata: metadata)
            case .statusChanged:
                status.update(statusText(), force: true)
            case .record(let event):
                blackBox?.append(event, at: .now)
            case .writeBlackBox(let reason):
                blackBox?.write(reason, at: .now, automatic: true)
            }
        }
        machine.clearActions()
    }

    private static func sleep(until tick: Tick) {
        let left = tick - Tick.now()
        guard left > 0 else { return }
        var ts = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
        _ = nanosleep(&ts, nil)  // EINTR (a signal) just ends the pause early
    }

    /// Rest values, then the board's own safe state (blocking, bounded), then the summary.
    private func finish(_ error: CommandFailure?) throws(CommandFailure) -> CommandOutcome {
        let confirmed = BoardRest.leave(board, values: machine.shutdown(), timeout: configuration.safeStateTimeout)
        board.close()
        closeBlackBox()
        advertising?.stop()
        socket.close()
        status.clear()
        logControlTotals()
        if configuration.writesStandardOutput {
            let engine = machine.engine
            StandardOutput.write(engine.counters.summary(sources: engine.controllers.count,
                                                         evicted: engine.controllers.evicted) + "\n")
        }
        if let error { throw error }
        if !confirmed {
            throw CommandFailure("the board did not confirm the safe state (motors 0) within \(configuration.safeStateTimeout); check the board",
                                 kind: .deviceUnavailable)
        }
        return .done
    }

    // MARK: Logging and status

    private func log(_ event: BoardEvent) {
        switch event {
        case .connected(let device): logger.info("board connected", metadata: ["device": "\(device)"])
        case .disconnected(let device, let reason):
            boardRefusal = nil
            logger.error("board lost", metadata: ["device": "\(device)", "reason": "\(reason)"])
        case .reconnected(let device):
            boardRefusal = nil
            logger.notice("board reconnected", metadata: ["device": "\(device)"])
        case .refused(_, let reason):
            boardRefusal = reason
            logger.error("board refused: \(reason)")
        }
    }

    func statusText() -> String {
        let machine = machine
        return StatusText.line(engine: machine.engine, now: .now, name: { machine.plane.displayName(of: $0) },
                               classroom: machine.plane.statusParts,
                               board: boardRefusal != nil ? "BOARD REFUSED" : boardResolution.map(StatusText.board))
            + (advertising.map { " · " + $0.summary } ?? "")
    }
}
