import ControlPlane
import ControlWire

/// What a receiver says its robot is doing for this controller (Protocol.md §7.9), as
/// ``RobotController/states`` delivers it.
public enum RobotState: Hashable, Sendable {
    /// This controller's states reach the motors.
    case driving
    /// This controller owns the robot, but the receiver waits for a resting state (no drive
    /// buttons, tilt level) before it moves again: after start-up, silence, a board reconnect.
    case waitingForRest
    /// Another controller drives; the text is its display name or address.
    case owned(by: String)
    /// This controller may not drive; the text says why (wrong pairing code, busy, another session).
    case refused(String)
    /// A teacher's stop-all holds the robot.
    case stoppedByTeacher
    /// The receiver has lost its board; the text says what it knows.
    case boardMissing(String)
    /// Nobody drives: the next state from this controller takes the robot.
    case free

    init(_ report: RobotReport.State) {
        switch report {
        case .driving: self = .driving
        case .failsafe: self = .waitingForRest
        case .owned(let by): self = .owned(by: by.text)
        case .refused(_, let text): self = .refused(text.text)
        case .teacherStop: self = .stoppedByTeacher
        case .boardMissing(let why): self = .boardMissing(why.text)
        case .free: self = .free
        }
    }
}
