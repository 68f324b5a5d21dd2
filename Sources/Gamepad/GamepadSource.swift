import CSDL2
import SystemIO
import RemoteWire
import Synchronization

/// A gamepad as a controller input: SDL on its own thread, hot-plug, selection, mapping and
/// the safety rules of ``GamepadSession``; out come ``GamepadEvent``s.
///
/// Use from a poll loop:
/// ```swift
/// let pad = try GamepadSource(.init(selector: selector, config: config))
/// // poll pad.descriptor for .readable, with your own deadline; then:
/// for event in pad.events() {
///     switch event {
///     case .state(let s): current = s            // send it now (it changed)
///     case .status(let s): statusLine.update("\(s)", force: true)
///     case .notice(let line): logger.notice("\(line)")
///     }
/// }
/// pad.close()   // on the way out (deinit does it too)
/// ```
/// The first events are `.state(.neutral)` and a status. The source never ends by itself: a
/// lost pad is neutral + a "no gamepad" status, and it waits for one.
///
/// Threading: every SDL call happens on the source's own thread; the methods here may be called
/// from any thread. One source per process (SDL is process-global): a second throws
/// ``GamepadError/busy`` until the first is closed.
package final class GamepadSource: Sendable {
    package struct Options: Sendable {
        package var selector: GamepadSelector
        package var config: GamepadConfig
        /// Pump period while a pad is open: the worst-case delay from the pad to an event.
        package var activeInterval: Duration = .milliseconds(4)
        /// Pump period while waiting for a pad: how soon a plugged-in pad is noticed.
        package var idleInterval: Duration = .milliseconds(100)
        /// How often to log "still no gamepad" while waiting.
        package var reminderInterval: Duration = .seconds(30)
        /// Extra SDL hints (name → value), set before SDL_Init; e.g. tests pass
        /// `SDL_JOYSTICK_HIDAPI=0` so no real HID device is scanned.
        package var hints: [String: String] = [:]

        package init(selector: GamepadSelector = .first, config: GamepadConfig = GamepadConfig()) {
            self.selector = selector
            self.config = config
        }
    }

    private let sdl: SDLThread
    private let sink: EventSink

    /// Starts SDL and begins looking for a pad. Throws when SDL cannot start or a mapping line
    /// is refused (``GamepadError/config(_:)``); never because no pad is there.
    package init(_ options: Options) throws(GamepadError) {
        let sink: EventSink
        do { sink = try EventSink() } catch { throw .system(error) }
        self.sink = sink
        sdl = try SDLThread(hints: options.hints, mappings: options.config.sdlMappings,
                            mappingsFile: options.config.file) { context in
            var driver = PadDriver(context.library, selector: options.selector, mapping: options.config.mapping,
                                   activeInterval: options.activeInterval, idleInterval: options.idleInterval,
                                   reminderInterval: options.reminderInterval)
            while !context.shouldStop {
                let now = ContinuousClock.now
                sink.push(driver.step(at: now))
                context.runJobs(thenSleepUntil: driver.nextWake(after: now))
            }
            driver.shutDown()
        }
    }

    deinit { sdl.close() }

    /// Readable while events are waiting; poll it, then call ``events()``.
    package var descriptor: Int32 { sink.flag.descriptor.rawValue }

    /// Takes every waiting event, oldest first (never blocks). Consecutive states are merged:
    /// only the latest of a run is kept.
    package func events() -> [GamepadEvent] { sink.drain() }

    /// The last state emitted (neutral until a pad drives).
    package var state: ControllerState { sink.latest.state }
    /// The last status emitted.
    package var status: GamepadStatus? { sink.latest.status }

    /// The joysticks SDL sees now.
    package func pads() throws(GamepadError) -> [PadInfo] {
        guard let pads = sdl.perform({ [sdl] in SDLPads.list(sdl.library) }) else { throw .closed }
        return pads
    }

    /// Stops the SDL thread (closing the pad, SDL_Quit). Safe to call twice. Emits nothing:
    /// the caller sends its own neutral state on the way out.
    package func close() { sdl.close() }

    // MARK: Virtual pads (tests and demos)

    /// Plugs in a virtual pad (see ``VirtualPad``); the source sees it as hot-plugged, with
    /// `axes` and `buttons` already in place (triggers default to released).
    package func attachVirtualPad(name: String, gameController: Bool = true, axes: [PadAxis: Int16] = [:],
                                 buttons: [PadButton: Bool] = [:]) throws(GamepadError) -> VirtualPad {
        try Self.unwrap(sdl.perform { [sdl] in
            SDLVirtualPads.attach(sdl.library, name: name, gameController: gameController, axes: axes, buttons: buttons)
        })
    }

    /// Sets raw axis readings and buttons of a virtual pad, all in one pump.
    package func updateVirtualPad(_ pad: VirtualPad, axes: [PadAxis: Int16] = [:],
                                 buttons: [PadButton: Bool] = [:]) throws(GamepadError) {
        try Self.unwrap(sdl.perform { [sdl] in SDLVirtualPads.update(sdl.library, pad, axes: axes, buttons: buttons) })
    }

    /// Unplugs a virtual pad.
    package func detachVirtualPad(_ pad: VirtualPad) throws(GamepadError) {
        try Self.unwrap(sdl.perform { [sdl] in SDLVirtualPads.detach(sdl.library, pad) })
    }

    static func unwrap<T>(_ result: Result<T, GamepadError>?) throws(GamepadError) -> T {
        guard let result else { throw .closed }
        return try result.get()
    }
}

/// Events from the SDL thread to whoever reads them, with a pipe to poll on.
final class EventSink: Sendable {
    let flag: EventFlag
    private let queue = Mutex<(events: [GamepadEvent], state: ControllerState, status: GamepadStatus?)>(([], .neutral, nil))
    /// Beyond this many queued events the oldest are dropped (a reader that stopped reading
    /// must not grow memory without bound; states are merged anyway).
    static let capacity = 1024

    init() throws(SystemError) { flag = try EventFlag() }

    func push(_ events: [GamepadEvent]) {
        guard !events.isEmpty else { return }
        queue.withLock { q in
            for event in events {
                switch event {
                case .state(let s):
                    q.state = s
                    if case .state = q.events.last { q.events.removeLast() }
                case .status(let s):
                    q.status = s
                case .notice:
                    break
                }
                q.events.append(event)
            }
            if q.events.count > Self.capacity { q.events.removeFirst(q.events.count - Self.capacity) }
        }
        flag.raise()
    }

    func drain() -> [GamepadEvent] {
        flag.clear()
        return queue.withLock { q in
            defer { q.events.removeAll(keepingCapacity: true) }
            return q.events
        }
    }

    var latest: (state: ControllerState, status: GamepadStatus?) {
        queue.withLock { ($0.state, $0.status) }
    }
}

/// A one-shot look at the joysticks SDL sees, for `analog-remote gamepads`.
package enum GamepadCatalog {
    /// Starts SDL, lists, stops SDL. `config` contributes its extra mappings (so "mapping
    /// known" reflects them); `virtualPads` are attached first (tests and demos).
    package static func list(config: GamepadConfig = GamepadConfig(), hints: [String: String] = [:],
                            virtualPads: [String] = []) throws(GamepadError) -> [PadInfo] {
        let sdl = try SDLThread(hints: hints, mappings: config.sdlMappings, mappingsFile: config.file) { context in
            while !context.shouldStop { context.runJobs(thenSleepUntil: .now + .seconds(1)) }
        }
        defer { sdl.close() }
        for name in virtualPads {
            _ = try GamepadSource.unwrap(sdl.perform { [sdl] in SDLVirtualPads.attach(sdl.library, name: name, gameController: true) })
        }
        guard let pads = sdl.perform({ () -> [PadInfo] in
            var buffer: [SDL_Event] = []
            _ = SDLPads.pump(sdl.library, buffer: &buffer)
            return SDLPads.list(sdl.library)
        }) else { throw .closed }
        return pads
    }
}
