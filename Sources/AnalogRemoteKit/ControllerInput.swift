import Controller
import RemoteWire
import SystemIO

/// What a ``RobotController`` hands its send loop, from any thread, through an `EventMailbox`.
enum ControllerCommand: Sendable, Equatable {
    case state(ControllerState)
    /// Neutral ×3, bye, end; the text is what ended it (`closed`, `cancelled`, `released`).
    case stop(String)
}

/// The send loop's input for a ``RobotController``: the latest state the program sent, kept
/// and resent at the steady rate by the loop's `SendSchedule`, until a stop. Used from the loop's
/// thread only.
final class ControllerInput: InputSource {
    let mailbox: EventMailbox<ControllerCommand>
    let name: String
    private var ended = false

    init(name: String, mailbox: EventMailbox<ControllerCommand>) {
        self.name = name
        self.mailbox = mailbox
    }

    var descriptor: Int32? { mailbox.descriptor }

    func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        [.state(.neutral)] + read(now: now)
    }

    func read(now: ContinuousClock.Instant) -> [InputEvent] {
        var events: [InputEvent] = []
        for command in mailbox.drain() where !ended {
            switch command {
            case .state(let state): events.append(.state(state))
            case .stop:
                ended = true
                events.append(.end(.quit))
            }
        }
        return events
    }
}
