#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization

/// Ctrl-C and SIGTERM for the bench, and the SIGTERMs the bench sends itself.
///
/// Trap: an in-process `ReceiverService` stops only on SIGINT/SIGTERM (its `SignalWatcher`), so
/// the bench stops it with `kill(getpid(), SIGTERM)`. Every dispatch signal source of the
/// process sees that signal, this one included; ``stopInProcessReceiver()`` counts the SIGTERMs
/// it sends so that they are not taken for a request to stop the whole run. Signal sources are
/// never cancelled (the receiver's are not either), so from the first one on the process keeps
/// SIGINT/SIGTERM ignored and delivered to the sources.
///
/// Trap (measured): libdispatch delivers a signal to its sources through a handler it installs
/// when the first source for that signal registers. `SignalWatcher.init` sets the signal to
/// SIG_IGN before making its source; in a process where a source for that signal already
/// exists, that replaces libdispatch's handler, the kernel then discards the signal, and no
/// source — old or new — ever fires. ``restoreHandlers()`` puts libdispatch's handler back; the
/// bench calls it after building each in-process receiver or controller.
public final class Interruption: Sendable {
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]
    private let flags = Flags()
    /// libdispatch's handlers, once installed.
    private let handlers: [(signal: Int32, action: sigaction)]

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

    public init() {
        let queue = DispatchQueue(label: "analog-remote.bench.signals")
        var made: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            _ = Glibc.signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            made.append(source)
        }
        sources = made
        for (source, sig) in zip(made, [SIGINT, SIGTERM]) {
            source.setEventHandler { [flags] in flags.caught(sig) }
            source.resume()
        }
        // Registration is asynchronous (libdispatch's manager thread): wait for the handlers.
        var saved: [(signal: Int32, action: sigaction)] = []
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            for _ in 0..<1000 {
                sigaction(sig, nil, &action)
                if Self.isRealHandler(action) { break }
                usleep(1000)
            }
            if Self.isRealHandler(action) { saved.append((sig, action)) }
        }
        handlers = saved
    }

    private static func isRealHandler(_ action: sigaction) -> Bool {
        let raw = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        return raw != 0 && raw != 1   // SIG_DFL, SIG_IGN
    }

    /// Puts back libdispatch's SIGINT/SIGTERM handlers after a `SignalWatcher` set SIG_IGN.
    public func restoreHandlers() {
        for (sig, action) in handlers {
            var copy = action
            sigaction(sig, &copy, nil)
        }
    }

    /// The signal that asked the run to stop, if any.
    public var signal: Int32? { flags.state.withLock { $0.interrupted } }

    /// Throws ``BenchError/interrupted`` once Ctrl-C or a SIGTERM from outside arrived.
    public func check() throws(BenchError) {
        if let sig = signal { throw .interrupted(sig) }
    }

    /// Sends this process a SIGTERM that only the in-process receiver reacts to.
    public func stopInProcessReceiver() {
        flags.state.withLock { $0.ownTerms += 1 }
        kill(getpid(), SIGTERM)
    }
}

/// Why a run stopped early; each is one line for the person at the terminal.
public enum BenchError: Error, CustomStringConvertible, Sendable {
    case interrupted(Int32)
    case setup(String)
    case measurement(String)

    public var description: String {
        switch self {
        case .interrupted(let sig): "interrupted by \(sig == SIGINT ? "SIGINT" : "SIGTERM"); children stopped"
        case .setup(let why): why
        case .measurement(let why): why
        }
    }
}
