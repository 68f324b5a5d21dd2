#if canImport(Glibc)
import Glibc
#endif
import CSDL2
import ConfigFile
import Dispatch
import Foundation
import Synchronization
import SystemIO

/// The one thread that calls SDL in this process.
///
/// Trap: SDL's joystick and event state is global and not thread-safe; SDL must be initialised,
/// pumped and shut down from one thread. Every SDL call in this module runs on an
/// `SDLThread`: its own loop, or a job sent with ``perform(_:)``. Only one `SDLThread` may
/// exist at a time in a process (a second throws ``GamepadError/busy``).
final class SDLThread: Sendable {
    /// Hints set before `SDL_Init`, for every user:
    /// - no signal handlers: SDL would otherwise take SIGINT/SIGTERM from our SignalWatcher and
    ///   turn them into SDL_QUIT events that nobody reads, so Ctrl-C would do nothing;
    /// - background events: we have no window, so we are never "focused";
    /// - positional face buttons: a Nintendo pad's east button is `east`, not "A".
    static let baseHints: [(String, String)] = [
        (SDL_HINT_NO_SIGNAL_HANDLERS, "1"),
        (SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, "1"),
        (SDL_HINT_GAMECONTROLLER_USE_BUTTON_LABELS, "0"),
    ]

    private static let inUse = Atomic<Bool>(false)

    private struct Job: Sendable {
        let run: @Sendable () -> Void
        let cancel: @Sendable () -> Void
    }

    private struct Queue {
        var jobs: [Job] = []
        var closed = false
    }

    /// The SDL calls (loaded at run time); every use must be on this thread.
    let library: SDLLibrary
    private let queue = Mutex(Queue())
    private let wake: EventFlag
    private let stopRequested = Atomic<Bool>(false)
    private let sdlThreadID = Atomic<UInt>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let joined = Atomic<Bool>(false)

    /// What the loop body gets: the SDL thread's way to run jobs and sleep.
    struct Context {
        fileprivate let owner: SDLThread
        var library: SDLLibrary { owner.library }
        var shouldStop: Bool { owner.stopRequested.load(ordering: .acquiring) }
        /// Runs queued jobs; if there were none, waits until `deadline` or until a job or stop
        /// arrives. (After a job it returns at once, so what the job changed is pumped now.)
        func runJobs(thenSleepUntil deadline: ContinuousClock.Instant) {
            owner.wake.clear()
            if owner.runJobs() > 0 { return }
            if owner.queue.withLock({ !$0.jobs.isEmpty }) || shouldStop { return }
            _ = try? Poller.wait([(owner.wake.descriptor.rawValue, .readable)], until: deadline)
        }
    }

    /// Starts the thread: loads libSDL2, sets the hints, initialises the game-controller
    /// subsystem, adds `mappings`, then runs `body` until ``close()``; `SDL_Quit` when it returns.
    /// Throws if SDL is not installed, cannot start or refuses a mapping (nothing keeps running then).
    init(hints: [String: String], mappings: [String], mappingsFile: String,
         body: @escaping @Sendable (Context) -> Void) throws(GamepadError) {
        library = try SDLLibrary.shared.get()
        guard !Self.inUse.exchange(true, ordering: .acquiringAndReleasing) else { throw .busy }
        do {
            wake = try EventFlag()
        } catch {
            Self.inUse.store(false, ordering: .releasing)
            throw .system(error)
        }
        let started = StartResult()
        let thread = Thread { [self] in
            sdlThreadID.store(UInt(pthread_self()), ordering: .releasing)
            let result = Self.startSDL(library, hints: hints, mappings: mappings, mappingsFile: mappingsFile)
            started.set(result)
            if case .success = result {
                body(Context(owner: self))
                library.SDL_Quit()
            }
            closeQueue()
            Self.inUse.store(false, ordering: .releasing)
            finished.signal()
        }
        thread.name = "sdl-gamepad"
        thread.start()
        if case .failure(let error) = started.wait() {
            _ = finished.wait(timeout: .now() + 5)
            joined.store(true, ordering: .releasing)
            throw error
        }
    }

    deinit { close() }

    private final class StartResult: Sendable {
        private let value = Mutex<Result<Void, GamepadError>?>(nil)
        private let ready = DispatchSemaphore(value: 0)
        func set(_ r: Result<Void, GamepadError>) { value.withLock { $0 = r }; ready.signal() }
        func wait() -> Result<Void, GamepadError> {
            ready.wait()
            return value.withLock { $0 } ?? .success(())
        }
    }

    private static func startSDL(_ sdl: SDLLibrary, hints: [String: String], mappings: [String],
                                 mappingsFile: String) -> Result<Void, GamepadError> {
        for (name, value) in baseHints { _ = sdl.SDL_SetHint(name, value) }
        for (name, value) in hints.sorted(by: { $0.key < $1.key }) { _ = sdl.SDL_SetHint(name, value) }
        sdl.SDL_SetMainReady()
        if sdl.SDL_Init(UInt32(SDL_INIT_GAMECONTROLLER | SDL_INIT_JOYSTICK)) != 0 {
            let message = sdl.lastError()
            sdl.SDL_Quit()
            return .failure(.sdl(call: "SDL_Init(GAMECONTROLLER|JOYSTICK)", message: message))
        }
        for (i, line) in mappings.enumerated() where sdl.SDL_GameControllerAddMapping(SDLMappingLine.normalized(line) ?? line) < 0 {
            let message = sdl.lastError()
            sdl.SDL_Quit()
            return .failure(.config(GamepadConfigError(
                file: mappingsFile, key: "gamepad.mappings[\(i)]",
                problem: "SDL refused it: \(message) (allowed: an SDL mapping line \"GUID,name,a:b0,…\")")))
        }
        return .success(())
    }

    var isCurrentThread: Bool { sdlThreadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Runs `body` on the SDL thread and returns its result; nil when the thread has stopped.
    /// Called on the SDL thread itself, it runs `body` at once.
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        if isCurrentThread { return body() }
        let box = JobResult<T>()
        let job = Job(run: { box.finish(body()) }, cancel: { box.finish(nil) })
        let accepted = queue.withLock { q -> Bool in
            if q.closed { return false }
            q.jobs.append(job)
            return true
        }
        guard accepted else { return nil }
        wake.raise()
        return box.wait()
    }

    private final class JobResult<T: Sendable>: Sendable {
        private let value = Mutex<T?>(nil)
        private let done = DispatchSemaphore(value: 0)
        func finish(_ v: T?) { value.withLock { $0 = v }; done.signal() }
        func wait() -> T? { done.wait(); return value.withLock { $0 } }
    }

    private func runJobs() -> Int {
        let jobs = queue.withLock { q -> [Job] in
            defer { q.jobs.removeAll() }
            return q.jobs
        }
        for job in jobs { job.run() }
        return jobs.count
    }

    private func closeQueue() {
        let left = queue.withLock { q -> [Job] in
            q.closed = true
            defer { q.jobs.removeAll() }
            return q.jobs
        }
        for job in left { job.cancel() }
    }

    /// Stops the loop, shuts SDL down and waits for the thread to end. Safe to call twice;
    /// must not be called from the SDL thread's own loop body.
    func close() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.raise()
        if isCurrentThread { return }
        finished.wait()
    }
}

/// Why the gamepad input could not start or do what was asked.
package enum GamepadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An SDL call failed, with SDL_GetError's text.
    case sdl(call: String, message: String)
    /// libSDL2 is not installed (or too old): the loader's reason.
    case libraryMissing(library: String, reason: String)
    /// The config is wrong (an SDL mapping line SDL refused).
    case config(GamepadConfigError)
    /// Another gamepad source is already running in this process (SDL is process-global).
    case busy
    /// A system call failed (the wake-up pipe).
    case system(SystemError)
    /// The source was closed.
    case closed

    package var description: String {
        switch self {
        case .sdl(let call, let message): "gamepad: \(call) failed: \(message)"
        case .libraryMissing(let library, let reason): "gamepad: SDL2 (\(library)) cannot be loaded: \(reason)"
        case .config(let error): error.description
        case .busy: "gamepad: SDL is already in use by another gamepad input in this process"
        case .system(let error): "gamepad: \(error)"
        case .closed: "gamepad: the input is closed"
        }
    }
}
