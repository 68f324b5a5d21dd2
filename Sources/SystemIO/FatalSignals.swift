#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Installing a last-resort handler for the signals a process dies of (a Swift trap is SIGTRAP
/// or SIGILL; then SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGQUIT), and handing the signal back to
/// whoever had it before (the Swift runtime's backtracer, or the default core dump).
///
/// The handler itself may only make async-signal-safe calls; ``chain(_:previous:)`` is one.
package enum FatalSignals {
    package static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP, SIGQUIT]

    /// Room for every signal number's previous action; allocate once, before installing.
    package static func allocatePrevious() -> UnsafeMutablePointer<sigaction> {
        let p = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        p.initialize(repeating: sigaction(), count: 65)
        return p
    }

    /// Installs `handler` for every fatal signal, saving the previous actions in `previous`.
    /// Also unblocks them: a parent that spawns us from a Dispatch thread (Foundation's Process)
    /// passes some blocked, the mask is inherited across exec, and a blocked SIGABRT would never
    /// reach the handler.
    package static func install(_ handler: @convention(c) (Int32) -> Void, previous: UnsafeMutablePointer<sigaction>) {
        for sig in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler
            sigemptyset(&action.sa_mask)
            // The runtime's alternate stack (when it set one up) lets us run after a stack overflow.
            action.sa_flags = Int32(SA_ONSTACK)
            _ = sigaction(sig, &action, previous + Int(sig))
        }
        var set = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// From a handler: puts the previous action back and delivers `sig` again. It is blocked
    /// while the handler runs, so it arrives as soon as the handler returns (or the faulting
    /// instruction faults again).
    package static func chain(_ sig: Int32, previous: UnsafeMutablePointer<sigaction>) {
        _ = sigaction(sig, previous + Int(sig), nil)
        _ = raise(sig)
    }
}
