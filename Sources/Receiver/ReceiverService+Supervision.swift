#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import SystemIO

/// What `systemctl reload` (SIGHUP) gives the running receiver: the settings that can change
/// without a restart, read again from the config file and the command line.
package struct ReceiverReload: Sendable {
    package var mapping: Mapping
    /// Settings that changed but need a restart (`port`, `board`, …), one line each, logged.
    package var needsRestart: [String]

    package init(mapping: Mapping, needsRestart: [String] = []) {
        self.mapping = mapping
        self.needsRestart = needsRestart
    }
}

/// Re-reads the configuration for the board in use (its probe result, nil when not probed);
/// throws (one line, the running settings stay) when it is bad or does not fit the board.
package typealias ReceiverReloader = @Sendable (BoardResolution?) throws(CommandFailure) -> ReceiverReload

/// The receiver under a service manager (docs/robot-install.md):
/// - `READY=1` once the port is bound, the board open and, when advertising, the name
///   announced (registered with the responder) — so `systemctl start` returns when a controller
///   can find and drive the robot;
/// - `WATCHDOG=1` from the receive loop at half of `WatchdogSec` (a stalled loop sends none,
///   and systemd aborts and restarts the service), and only while the board link's thread —
///   which lets the loop's commands out after each reply — still goes round: a due keep-alive
///   waits for it (looked at again every ``linkRecheck``), so a stuck link is aborted too;
/// - SIGHUP: `RELOADING=1`, the reloader, the new mapping applied (the owner keeps the robot),
///   `READY=1` again; a bad config is logged and the running one kept; then, with a receipts
///   directory (systemd's `RuntimeDirectory=`), a ``ReloadReceipt`` that `analog-remote reload`
///   waits for — written after `READY=1`, so systemd has the receiver running again before
///   the reload command exits;
/// - `STOPPING=1` on the way out.
/// All of it is off when there is no notifier and no reloader (a receiver started by hand).
final class ServiceSupervision {
    let notifier: ServiceNotifier?
    let reloader: ReceiverReloader?
    /// Where reload receipts go (`$RUNTIME_DIRECTORY`), or nil.
    let receipts: SafeDirectory?
    /// Reloads handled so far (the receipt's count).
    var reloads = 0
    /// Raised on SIGHUP (only with a reloader: otherwise SIGHUP keeps its default action).
    private let hangups: EventFlag?
    private var registration: Int?
    private(set) var readySent = false
    private var nextKeepAlive: Tick?
    /// Test hook (`ANALOG_REMOTE_TEST_STALL_AFTER_MS`): when the loop stops serving.
    private let stallAt: Tick?
    /// While waiting for the announcement to be registered: how often to look.
    private let readinessPoll = Tick.nanoseconds(.milliseconds(20))
    /// A due keep-alive held back by a stale board link: how soon to look again.
    static let linkRecheck: Duration = .milliseconds(50)
    /// Whether the last due keep-alive was held back (said once per episode).
    private var heldBack = false

    init(notifier: ServiceNotifier?, reloader: ReceiverReloader?, receipts: SafeDirectory? = nil, stallAfter: Duration?) throws(SystemError) {
        self.notifier = notifier
        self.reloader = reloader
        self.receipts = receipts
        stallAt = stallAfter.map { Tick.now() + Tick.nanoseconds($0) }
        if reloader != nil {
            let flag = try EventFlag()
            hangups = flag
            registration = SignalHub.register([SIGHUP]) { _ in flag.raise() }
        } else {
            hangups = nil
        }
    }

    deinit { if let registration { SignalHub.unregister(registration) } }

    /// Extra descriptors for the loop's poll (SIGHUP), in order after its own.
    var descriptors: [(fd: Int32, events: Poller.Events)] {
        hangups.map { [($0.descriptor.rawValue, .readable)] } ?? []
    }

    /// The loop's next wake-up, with ours folded in.
    func deadline(_ other: Tick?, now: Tick) -> Tick? {
        // Asked on every wake-up: a receiver started by hand has nothing to add.
        if notifier == nil && stallAt == nil { return other }
        var candidates = [other, nextKeepAlive, stallAt].compactMap { $0 }
        if notifier != nil && !readySent { candidates.append(now + readinessPoll) }
        return candidates.min()
    }

    /// Whether the stall hook's time has come.
    func shouldStall(at now: Tick) -> Bool { stallAt.map { now >= $0 } ?? false }

    /// True (once) when SIGHUP arrived. `ready`: the poll's events for ``descriptors`` (a
    /// `read` of the flag on every wake-up was one system call per datagram at low rates).
    func takeHangup(_ ready: ArraySlice<Poller.Events>) -> Bool {
        guard let hangups, ready.first.map({ !$0.isEmpty }) == true else { return false }
        return hangups.clear()
    }

    /// Sends `READY=1` once `isReady`; keep-alives when due and `linkStale` says nil (else the
    /// milliseconds since the board link's thread last went round).
    func tick(at now: Tick, isReady: () -> Bool, linkStale: () -> Int64?, status: () -> String, logger: Logger) {
        guard let notifier else { return }
        if !readySent, isReady() {
            readySent = true
            send(["READY=1", "STATUS=\(status())", "MAINPID=\(getpid())"], logger: logger)
            if let interval = notifier.keepAliveInterval {
                send(["WATCHDOG=1"], logger: logger)
                nextKeepAlive = now + Tick.nanoseconds(interval)
            }
        }
        if let due = nextKeepAlive, now >= due, let interval = notifier.keepAliveInterval {
            if let ms = linkStale() {
                if !heldBack {
                    logger.warning("the board link's thread has not run for \(ms) ms; holding the watchdog keep-alive back until it does")
                }
                heldBack = true
                nextKeepAlive = now + Tick.nanoseconds(Self.linkRecheck)
                return
            }
            heldBack = false
            send(["WATCHDOG=1"], logger: logger)
            // From now, not from `due`: after a late wake-up the next one is a full interval away.
            nextKeepAlive = now + Tick.nanoseconds(interval)
        }
    }

    func send(_ fields: [String], logger: Logger) {
        guard let notifier else { return }
        do {
            try notifier.send(fields)
        } catch {
            logger.warning("cannot notify the service manager: \(error)")
        }
    }
}

extension ReceiverService {
    /// SIGHUP: read the configuration again and apply what can change while running.
    func reload(at now: Tick) {
        guard let reloader = supervision.reloader else { return }
        supervision.send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"], logger: logger)
        let outcome: ReloadReceipt.Outcome
        let text: String
        do throws(CommandFailure) {
            let fresh = try reloader(boardResolution)
            for line in fresh.needsRestart {
                logger.warning("reload: \(line) changed; it takes effect after a restart (systemctl restart analog-remote)")
            }
            if fresh.mapping != machine.engine.mapping {
                machine.replaceMapping(fresh.mapping, at: now)
                perform()
                (outcome, text) = (.applied, "new mapping in use; the controller keeps the robot and drives again after a resting state")
            } else {
                (outcome, text) = (.unchanged, "configuration read again, mapping unchanged")
            }
            logger.notice("reload: \(text)")
        } catch {
            (outcome, text) = (.refused, error.message)
            logger.error("reload failed, keeping the running configuration: \(error.message)")
        }
        supervision.send(["READY=1", "STATUS=\(readyStatus())"], logger: logger)
        supervision.reloads += 1
        guard let receipts = supervision.receipts else { return }
        let receipt = ReloadReceipt(pid: getpid(), count: supervision.reloads, outcome: outcome, text: text)
        do {
            try receipts.replace(ReloadReceipt.fileName, with: Array(receipt.line.utf8))
        } catch {
            logger.warning("reload: cannot leave the receipt `analog-remote reload` waits for (\(error)); systemctl reload will time out")
        }
    }

    /// The board link's thread goes round at least once per reconnect interval (300 ms; per
    /// reply timeout, 100 ms, while the board is up): silent longer than this, it is stuck.
    static let linkStaleAfter: Duration = .milliseconds(500)

    /// Milliseconds since the board link's thread last went round, when that is too long; nil
    /// when it is alive (or the sink has no such thread).
    func staleLink(at tick: Tick) -> Int64? {
        guard let beat = board.linkBeat else { return nil }
        let age = tick - beat
        return age > Tick.nanoseconds(Self.linkStaleAfter) ? age / 1_000_000 : nil
    }

    /// Whether a controller can find and drive this receiver now.
    var isReady: Bool {
        guard let advertising else { return true }
        return advertising.registeredName != nil
    }

    func readyStatus() -> String {
        let port = (try? socket.localAddress().port).map { "\($0)" } ?? "?"
        let name = advertising?.registeredName.map { ", announced as \"\($0)\"" } ?? ""
        return "receiving on udp port \(port)\(name)"
    }

    /// The stall hook: the loop stops serving packets and keep-alives until a signal arrives
    /// (then the receiver exits as for any signal, writing the safe state).
    func stall() throws(SystemError) {
        logger.warning("test hook ANALOG_REMOTE_TEST_STALL_AFTER_MS: the receive loop stops serving until a signal")
        while runner.stop == nil {
            _ = try runner.wait(until: nil)
        }
    }

    static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}
