#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO
import Synchronization

/// Ctrl-C and SIGTERM for the bench, and the SIGTERMs the bench sends itself.
///
/// Trap: an in-process `ReceiverService` stops only on SIGINT/SIGTERM (its `SignalWatcher`), so
/// the bench stops it with `kill(getpid(), SIGTERM)`. Every watcher of the process sees that
/// signal (``SignalHub`` fans it out), this one included; ``stopInProcessReceiver()`` counts the
/// SIGTERMs it sends so that they are not taken for a request to stop the whole run.
package final class Interruption: Sendable {
    private let flags = Flags()
    private let registration: Int

    private final class Flags: Sendable {
        let state = Mutex<(interrupted: Int32?, ownTerms: Int)>((nil, 0))

        func caught(_ sig: Int32) {
            state.withLock { s in
                if sig == SIGTERM && s.ownTerms > 0 {
                    s.ownTerms -= 1
                    return
                }
                if s.interrupted == nil { s.interrupted = sig }
            }
        }
    }

    package init() {
        registration = SignalHub.register([SIGINT, SIGTERM]) { [flags] sig in flags.caught(sig) }
    }

    deinit { SignalHub.unregister(registration) }

    /// The signal that asked the run to stop, if any.
    package var signal: Int32? { flags.state.withLock { $0.interrupted } }

    /// Throws ``BenchError/interrupted`` once Ctrl-C or a SIGTERM from outside arrived.
    package func check() throws(BenchError) {
        if let sig = signal { throw .interrupted(sig) }
    }

    /// Sends this process a SIGTERM that only the in-process receiver reacts to.
    package func stopInProcessReceiver() {
        flags.state.withLock { $0.ownTerms += 1 }
        kill(getpid(), SIGTERM)
    }
}

/// Why a run stopped early; each is one line for the person at the terminal.
package enum BenchError: Error, CustomStringConvertible, Sendable {
    case interrupted(Int32)
    case setup(String)
    case measurement(String)

    package var description: String {
        switch self {
        case .interrupted(let sig): "interrupted by \(sig == SIGINT ? "SIGINT" : "SIGTERM"); children stopped"
        case .setup(let why): why
        case .measurement(let why): why
        }
    }
}
