import Controller
import RemoteWire
import SystemIO

/// What the WebSocket side hands a phone's send loop (through ``PhoneSource/mailbox``).
package enum PhoneInput: Equatable, Sendable {
    /// The page's whole state (already clamped by ``PageMessage/decode(_:)``).
    case state(ControllerState)
    /// End this controller: neutral ×3, bye. The text is what the log says (`the page was hidden`).
    case stop(String)
}

/// The input source of one phone's controller: states arrive from the page's WebSocket through
/// an ``EventMailbox`` (the one seam between the server's async world and this poll loop).
///
/// Staleness, on the server's side too (the page's own timer is the first line, this is the
/// second): the page sends its whole state at least every 50 ms. If nothing arrives for
/// ``Timing/stale``, the controller goes neutral at once (and keeps running: the page may come
/// back, and must send a resting state first like any controller after silence). If nothing
/// arrives for ``Timing/silent``, the controller ends (neutral ×3, bye), freeing the robot.
package final class PhoneSource: InputSource {
    package struct Timing: Sendable, Equatable {
        package var stale: Duration
        package var silent: Duration

        package init(stale: Duration = .milliseconds(200), silent: Duration = .seconds(10)) {
            self.stale = stale
            self.silent = max(silent, stale)
        }
    }

    package let mailbox: EventMailbox<PhoneInput>
    package let timing: Timing
    package let name: String
    private var last: ContinuousClock.Instant?
    private var neutralForSilence = false
    private var ended = false

    /// `mailbox`: bounded, latest news wins, so a flood from one page cannot grow memory (the
    /// WebSocket side rate limits first; this is the bound behind it).
    package init(name: String, mailbox: EventMailbox<PhoneInput>, timing: Timing = Timing()) {
        self.mailbox = mailbox
        self.timing = timing
        self.name = name
    }

    package var descriptor: Int32? { mailbox.descriptor }

    package var nextDeadline: ContinuousClock.Instant? {
        guard !ended, let last else { return nil }
        return neutralForSilence ? last + timing.silent : last + timing.stale
    }

    package func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        last = now
        return [.state(.neutral)]
    }

    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        Self.events(for: mailbox.drain(), now: now, into: self)
    }

    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended, let last else { return [] }
        if now - last >= timing.silent {
            ended = true
            return [.end(.deviceLost("\(name): no word from the page for \(Self.describe(timing.silent))"))]
        }
        if !neutralForSilence, now - last >= timing.stale {
            neutralForSilence = true
            return [.state(.neutral), .notice("\(name): no state from the page for \(Self.describe(timing.stale)): neutral")]
        }
        return []
    }

    private static func events(for inputs: [PhoneInput], now: ContinuousClock.Instant, into source: PhoneSource) -> [InputEvent] {
        var out: [InputEvent] = []
        for input in inputs where !source.ended {
            switch input {
            case .state(let s):
                source.last = now
                source.neutralForSilence = false
                out.append(.state(s))
            case .stop(let why):
                source.ended = true
                out.append(.end(.deviceLost("\(source.name): \(why)")))
            }
        }
        return out
    }

    static func describe(_ d: Duration) -> String {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
    }
}
