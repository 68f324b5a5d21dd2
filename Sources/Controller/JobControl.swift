#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemIO

/// Ctrl-Z and `fg` for the send loop: SIGTSTP and SIGCONT as a descriptor to poll.
///
/// SIGTSTP is caught (its default would stop the process with the terminal raw and the robot
/// driving): the loop sends neutral, gives the terminal back, then stops itself with SIGSTOP,
/// which cannot be caught. SIGCONT — after that stop, or after a SIGSTOP from outside — makes the
/// loop take the terminal again and resume sending. Signals are delivered by ``SignalHub``.
final class JobControl: Sendable {
    private let flag: EventFlag
    private final class Pending: Sendable { let bits = Atomic<Int32>(0) }
    private let pending = Pending()
    private let registration: Int
    private static let stopBit: Int32 = 1, continueBit: Int32 = 2

    init() throws(SystemError) {
        let flag = try EventFlag()
        self.flag = flag
        registration = SignalHub.register([SIGTSTP, SIGCONT]) { [pending] sig in
            let bit = sig == SIGTSTP ? Self.stopBit : Self.continueBit
            _ = pending.bits.bitwiseOr(bit, ordering: .acquiringAndReleasing)
            flag.raise()
        }
    }

    deinit { SignalHub.unregister(registration) }

    var descriptor: Int32 { flag.descriptor.rawValue }

    /// What arrived since the last call.
    func take() -> (stop: Bool, cont: Bool) {
        flag.clear()
        let bits = pending.bits.exchange(0, ordering: .acquiringAndReleasing)
        return (bits & Self.stopBit != 0, bits & Self.continueBit != 0)
    }

    /// Stops this process now (SIGSTOP); returns once it is continued.
    func stopProcess() {
        _ = kill(getpid(), SIGSTOP)
    }

    /// After ``stopProcess()``: takes the SIGCONT that woke us. The hub delivers it on a dispatch
    /// queue, so it may come a moment after the process runs again; taken later, it would look like
    /// a second `fg` and resume the input again — resetting a key pressed in between (seen in CI
    /// under load: the first key after `fg` was lost). Waits at most `timeout`; returns whether a
    /// new SIGTSTP came meanwhile.
    func takeContinue(timeout: Duration = .milliseconds(500)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var stop = false
        while true {
            let (s, c) = take()
            stop = stop || s
            if c { return stop }
            let left = deadline - .now
            if left <= .zero { return stop }
            _ = try? Poller.wait(for: descriptor, events: .readable, timeout: left)
        }
    }
}
