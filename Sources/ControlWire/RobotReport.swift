import RemoteWire
/// What the robot is doing for one controller (Protocol.md §7.9, control type 0x0B
/// `robot-state`, receiver → controller, unreliable): sent on every change and after every pong,
/// so a driver always sees DRIVING, FAILSAFE, OWNED BY …, STOPPED BY TEACHER, BOARD MISSING.
///
/// Payload: revision UInt32, state UInt8, detail UInt8, board str8, text str8 — decoded exactly
/// (no trailing bytes, no unknown state or cause).
package struct RobotReport: Hashable, Sendable {
    package enum State: Hashable, Sendable {
        /// This controller's states reach the motors.
        case driving
        /// This controller owns the robot, but states are held until a resting one (§3.3).
        case failsafe(Cause)
        /// Another controller drives; `by` is its display name (never its address).
        case owned(by: WireText)
        /// This controller may not drive: the deny reason and its text.
        case refused(ControlMessage.Deny.Reason, WireText)
        /// A teacher's stop-all holds the robot.
        case teacherStop
        /// The board link is down; `why` says what the receiver knows.
        case boardMissing(why: WireText)
        /// Nobody drives: the next valid state from this controller takes the robot.
        case free

        /// The wire code (payload byte 4).
        package var code: UInt8 {
            switch self {
            case .driving: 1
            case .failsafe: 2
            case .owned: 3
            case .refused: 4
            case .teacherStop: 5
            case .boardMissing: 6
            case .free: 7
            }
        }

        /// The name in logs and JSON: `driving`, `failsafe`, `owned`, `refused`, `teacher-stop`,
        /// `board-missing`, `free`.
        package var name: String {
            switch self {
            case .driving: "driving"
            case .failsafe: "failsafe"
            case .owned: "owned"
            case .refused: "refused"
            case .teacherStop: "teacher-stop"
            case .boardMissing: "board-missing"
            case .free: "free"
            }
        }
    }

    /// Why a receiver waits for a resting state (payload byte 5 of state 2).
    package enum Cause: UInt8, Hashable, Sendable, CaseIterable {
        case startup = 1, silence = 2, boardLink = 3, released = 4, teacherRelease = 5

        package var name: String {
            switch self {
            case .startup: "startup"
            case .silence: "silence"
            case .boardLink: "board-link"
            case .released: "released"
            case .teacherRelease: "teacher-release"
            }
        }
    }

    /// Grows by one (wrapping) with every change the receiver makes; a repeat keeps it.
    package var revision: UInt32
    package var state: State
    /// The board's profile / firmware name as the receiver knows it; empty when unknown.
    package var board: WireText

    package init(revision: UInt32, state: State, board: WireText) {
        self.revision = revision
        self.state = state
        self.board = board
    }

    /// Is `self` newer than `other` (32-bit serial arithmetic, RFC 1982)? Equal = a repeat.
    package func isNewer(than other: RobotReport) -> Bool {
        revision != other.revision && (revision &- other.revision) < 0x8000_0000
    }

    /// The same report ignoring the revision: did anything a driver sees change?
    package func sameContent(as other: RobotReport) -> Bool { state == other.state && board == other.board }

    /// What a controller shows, e.g. `FAILSAFE (silence): centre to resume`, `OWNED BY Ann`:
    /// the receiver's text behind the state's words, the whole as one text to show (at most a
    /// `str8`'s 255 bytes, like every text from the wire).
    package var headline: WireText { WireText(headlineText) }

    private var headlineText: String {
        switch state {
        case .driving: "DRIVING"
        case .failsafe(.startup): "READY: centre to start"
        case .failsafe(.silence): "FAILSAFE (silence): centre to resume"
        case .failsafe(.boardLink): "FAILSAFE (board link): centre to resume"
        case .failsafe(.released): "READY (previous driver left): centre to start"
        case .failsafe(.teacherRelease): "RELEASED BY TEACHER: centre to resume"
        case .owned(let by): "OWNED BY \(by)"
        case .refused(_, let text): text.isEmpty ? "REFUSED" : "REFUSED: \(text)"
        case .teacherStop: "STOPPED BY TEACHER"
        case .boardMissing(let why): why.isEmpty ? "BOARD MISSING" : "BOARD MISSING: \(why)"
        case .free: "FREE"
        }
    }

    package func encodePayload() -> [UInt8] {
        var w = ByteWriter()
        w.u32(revision)
        w.u8(state.code)
        switch state {
        case .failsafe(let cause): w.u8(cause.rawValue)
        case .refused(let reason, _): w.u8(reason.rawValue)
        default: w.u8(0)
        }
        w.str8(board)
        switch state {
        case .owned(let text), .refused(_, let text), .boardMissing(let text): w.str8(text)
        default: w.str8("")
        }
        return w.bytes
    }

    package static func decode(_ payload: ArraySlice<UInt8>) throws(ControlMessageError) -> RobotReport {
        var r = ByteReader(payload)
        let revision = try r.u32()
        let codeAt = r.offset - payload.startIndex
        let code = try r.u8()
        let detailAt = r.offset - payload.startIndex
        let detail = try r.u8()
        let board = try r.str8()
        let text = try r.str8()
        try r.expectEnd()
        let bad = { (at: Int) in ControlMessageError(.badField, at: at, bytes: Array(payload)) }
        let state: State
        switch code {
        case 1: state = .driving
        case 2:
            guard let cause = Cause(rawValue: detail) else { throw bad(detailAt) }
            state = .failsafe(cause)
        case 3: state = .owned(by: text)
        case 4:
            guard let reason = ControlMessage.Deny.Reason(rawValue: detail) else { throw bad(detailAt) }
            state = .refused(reason, text)
        case 5: state = .teacherStop
        case 6: state = .boardMissing(why: text)
        case 7: state = .free
        default: throw bad(codeAt)
        }
        return RobotReport(revision: revision, state: state, board: board)
    }
}
