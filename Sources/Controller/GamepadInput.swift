import Console
import Gamepad
import RemoteWire

/// `--input gamepad[:WHICH]`: an SDL game controller as an ``InputSource``.
///
/// SDL runs on the gamepad library's own thread; this source polls that library's wake-up
/// descriptor and drains its events, so it never blocks the send loop. Hot-plug never ends the
/// source (issue 7): an unplugged pad turns into the neutral state at once and the source keeps
/// waiting for a pad — it resumes only after a neutral input. The status line shows what the
/// pad is doing ("no gamepad — waiting for one", "waiting for neutral", "driving …").
public final class GamepadInput: InputSource {
    let pad: GamepadSource
    public private(set) var name = "gamepad"
    public var descriptor: Int32? { pad.descriptor }

    /// Starts SDL and begins looking for the selected pad (it may not be plugged in yet). Throws the
    /// gamepad library's typed errors (the CLI maps them to exit statuses).
    public convenience init(selector text: String?, configPath: String?) throws {
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
    public init(source: GamepadSource) {
        pad = source
    }

    public func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        [.state(pad.state)] + read(now: now)
    }

    public func read(now: ContinuousClock.Instant) -> [InputEvent] {
        pad.events().compactMap { event in
            switch event {
            case .state(let state): return .state(state)
            case .status(let status):
                name = "gamepad: \(status)"
                return nil
            case .notice(let line): return .notice(line)
            }
        }
    }

    public func close() { pad.close() }
}
