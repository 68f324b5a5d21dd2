import CSDL2

/// The SDL side of a ``GamepadSource``: pumps SDL, follows hot-plug, opens the selected pad,
/// reads it, and feeds the ``GamepadSession``. Lives on the SDL thread only.
///
/// Hot-plug: any device event (or the open pad reporting itself detached) makes the driver
/// re-check. A lost pad is reported to the session in the same pump, so the neutral state goes
/// out within one pump period of SDL noticing. With no pad open, the device list is examined
/// again only when SDL reports a device change.
struct PadDriver {
    let sdl: SDLLibrary
    let selector: GamepadSelector
    let mapping: GamepadMapping
    let activeInterval: Duration
    let idleInterval: Duration
    private(set) var session: GamepadSession
    private var controller: OpaquePointer?
    private var openPad: PadInfo?
    private var lastReading: MappedInput?
    private var lastMiss: GamepadSelector.Miss?
    private var recheck = true
    private var events: [SDL_Event] = []

    init(_ sdl: SDLLibrary, selector: GamepadSelector, mapping: GamepadMapping, activeInterval: Duration,
         idleInterval: Duration, reminderInterval: Duration) {
        self.sdl = sdl
        self.selector = selector
        self.mapping = mapping
        self.activeInterval = activeInterval
        self.idleInterval = idleInterval
        session = GamepadSession(selector: selector, mapping: mapping, reminderInterval: reminderInterval)
    }

    /// One pump: device changes first (so an unplug is neutral before anything else), then the
    /// open pad's reading, then timers.
    mutating func step(at now: ContinuousClock.Instant) -> [GamepadEvent] {
        var out: [GamepadEvent] = []
        let pumped = SDLPads.pump(sdl, buffer: &events)
        if pumped.devices { recheck = true }
        if let open = controller, sdl.SDL_GameControllerGetAttached(open) != SDL_TRUE {
            closeController()
            recheck = true
            out += session.handle(.disconnected, at: now)
        }
        if controller == nil && recheck {
            recheck = false
            out += choose(at: now)
        }
        // Read the pad only when SDL reported input (SDL sends an event for every change of an
        // axis, button or hat; reading 27 controls at every pump would cost CPU for nothing).
        if let open = controller, pumped.input {
            let reading = mapping.map(SDLPads.snapshot(sdl, open))
            if reading != lastReading {
                lastReading = reading
                out += session.handle(.input(reading), at: now)
            }
        }
        if let due = session.nextDeadline, now >= due {
            out += session.handle(.tick, at: now)
        }
        return out
    }

    private mutating func choose(at now: ContinuousClock.Instant) -> [GamepadEvent] {
        switch selector.choose(from: SDLPads.list(sdl)) {
        case .success(let pad):
            guard let opened = sdl.SDL_GameControllerOpen(Int32(pad.index)) else {
                // Seen but not openable (e.g. permissions, or gone again): report, try again at
                // the next device change.
                let miss = GamepadSelector.Miss.cannotOpen(pad, reason: sdl.lastError())
                lastMiss = miss
                return session.handle(.unavailable(miss), at: now)
            }
            controller = opened
            openPad = pad
            lastMiss = nil
            let reading = mapping.map(SDLPads.snapshot(sdl, opened))
            lastReading = reading
            return session.handle(.connected(pad, reading), at: now)
        case .failure(let miss):
            guard miss != lastMiss else { return [] }
            lastMiss = miss
            return session.handle(.unavailable(miss), at: now)
        }
    }

    /// When to pump next: soon while a pad is open, rarely while waiting for one.
    func nextWake(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let pump = now + (controller == nil ? idleInterval : activeInterval)
        guard let due = session.nextDeadline else { return pump }
        return min(pump, due)
    }

    private mutating func closeController() {
        if let open = controller { sdl.SDL_GameControllerClose(open) }
        controller = nil
        openPad = nil
        lastReading = nil
    }

    /// Closes the open pad (before SDL_Quit).
    mutating func shutDown() { closeController() }
}
