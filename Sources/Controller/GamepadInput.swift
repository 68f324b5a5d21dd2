import Console
import Gamepad
import RemoteWire

/// `--input gamepad[:WHICH]`: an SDL game controller as an ``InputSource``.
///
/// SDL runs on the gamepad library's own thread; this source polls that library's wake-up
/// descriptor and drains its events, so it never blocks the send loop. Hot-plug never ends the
/// source: an unplugged pad turns into the neutral state at once and the source keeps
/// waiting for a pad — it resumes only after a neutral input. The status line shows what the
/// pad is doing ("no gamepad — waiting for one", "waiting for neutral", "driving …").
package final class GamepadInput: InputSource {
    let pad: GamepadSource
    package private(set) var name = "gamepad"
    package var descriptor: Int32? { pad.descriptor }
    /// `q` and Ctrl-C/D/Z from the terminal, when stdin is one.
    let keys: GamepadTerminalKeys?
    package var secondDescriptor: Int32? { keys?.descriptor }
    private var ended = false

    /// Starts SDL and begins looking for the selected pad (it may not be plugged in yet). Throws the
    /// gamepad library's typed errors (the CLI maps them to exit statuses).
    package convenience init(selector text: String?, configPath: String?) throws {
        var selector = GamepadSelector.first
        var config = GamepadConfig()
        if let text {
            selector = try GamepadSelector(selector: text)
        }
        if let configPath {
            config = try GamepadConfig.load(path: configPath)
        }
        self.init(source: try GamepadSource(.init(selector: selector, config: config)))
    }

    /// Wraps a running source (tests attach virtual pads to it).
    package init(source: GamepadSource, terminalKeys: Bool = true) {
        pad = source
        keys = terminalKeys ? GamepadTerminalKeys() : nil
    }

    /// The quit combination on the pad: Start and Back (select) held together.
    package static let quitCombination: Buttons = [.start, .select]

    package func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        keys?.start()
        return [.state(pad.state)] + read(now: now)
    }

    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        let typed = keys?.read() ?? []
        if typed.contains(where: { if case .end = $0 { true } else { false } }) {
            ended = true
            return typed
        }
        var events = typed
        for event in pad.events() {
            switch event {
            case .state(let state) where state.buttons.isSuperset(of: Self.quitCombination):
                ended = true
                return events + [.notice("gamepad: Start + Back held: quitting"), .end(.quit)]
            case .state(let state): events.append(.state(state))
            case .status(let status): name = "gamepad: \(status)"
            case .notice(let line): events.append(.notice(line))
            }
        }
        return events
    }

    package func suspend() { keys?.stop() }

    package func resume(now: ContinuousClock.Instant) -> [InputEvent] {
        keys?.start()
        return []
    }

    package func close() {
        keys?.stop()
        pad.close()
    }
}
