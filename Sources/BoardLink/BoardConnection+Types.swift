import BoardProtocol

/// Tuning of a ``BoardConnection``.
package struct BoardOptions: Sendable, Hashable {
    /// How long the board may stay silent while a command is in flight (counted from the last
    /// byte received, so a slow board that is still talking is not cut off).
    package var replyTimeout: Duration = .milliseconds(100)
    /// How often a lost board's device is opened again.
    package var reconnectInterval: Duration = .milliseconds(300)
    /// Timeouts in a row after which the board counts as gone (closed and reopened).
    package var unansweredLimit: Int = 3
    /// Reads of the sensor block (``SensorBlock``) a second while the link is idle; 0 = never
    /// (``SensorPoller``). A board or profile without the block is never read.
    package var sensorRate: Double = SensorPoller.defaultRate
    /// Lets one changed value go out right behind a sensor read still on the wire (Protocol.md
    /// §4.6 rule 8): the kit's firmware answers both lines in the same pass of its loop, so a
    /// change never waits up to a pass (~12 ms) for the read's prompt. Off by default: one
    /// command on the wire at a time, whatever the board.
    package var writeBehindRead = false

    package init() {}
}

/// What happened to the link, reported on the connection's own thread: return quickly. From
/// there, ``BoardConnection/close()`` does not wait for the thread, and
/// ``BoardConnection/writeSafeState(timeout:)`` only requests the safe state (and returns false).
package enum BoardEvent: Sendable, Hashable {
    /// The board was opened at start.
    case connected(device: String)
    /// The board went away (unplugged, hung up, stopped answering); reopening is under way.
    case disconnected(device: String, reason: String)
    /// The board is back and holds the safe state (written before anything else).
    case reconnected(device: String)
    /// The board must not be driven: it does not fit (an address it lacks, another firmware
    /// than before) or it dropped a write. Its safe state was written where it has the bytes;
    /// nothing else is written until it is connected again. `reason` is one line naming the
    /// device, the address, the board's map size and what to do.
    case refused(device: String, reason: String)
}

/// The owner's judgement of a probed board (a value, so that a trailing closure still means
/// `onEvent`).
package struct BoardFitter: Sendable {
    package let judge: @Sendable (BoardIdentity) -> BoardFit
    package init(_ judge: @escaping @Sendable (BoardIdentity) -> BoardFit) { self.judge = judge }
}

/// What the owner decides once a probe told what the board is (``BoardConnection`` asks at
/// every connect, on its thread: return quickly).
package enum BoardFit: Sendable, Hashable {
    /// Drive it with this profile (its safe state is written first).
    case use(MemoryMapProfile)
    /// Do not drive it; `reason` is the line to report. The safe state of `safeState` (on the
    /// addresses the board has) is still written, so a board left lit or beeping goes quiet.
    case refuse(String, safeState: MemoryMapProfile?)
}

/// The state of a ``BoardConnection`` at one moment.
package struct BoardSnapshot: Sendable, Hashable {
    package var isConnected: Bool
    /// `serial:/dev/ttyACM0`, `midi:hw:1,0,0`, `sim`.
    package var device: String
    /// What the board acknowledged (address → value) since it was last (re)opened.
    package var confirmed: [UInt8: UInt8]
    /// Commands written to the board since start.
    package var commandsSent: Int
    /// Commands that failed (timeout, rejected) since start.
    package var commandsFailed: Int
    /// Times the board was lost.
    package var disconnections: Int
    /// The last problem, as one line naming the device; nil if none yet.
    package var lastError: String?
    /// What the probe after the last (re)connect found; nil until it answered.
    package var identity: BoardIdentity?
    /// The profile in use since that probe (nil before, or when refused).
    package var profile: MemoryMapProfile?
    /// Set while the board is refused (``BoardEvent/refused(device:reason:)``).
    package var refusal: String?
    /// A command is on the wire and its reply has not come yet: new values wait for it.
    package var awaitingReply = false
    /// The last sensor block read since the last (re)connect; nil before the first read, or
    /// when reads are off or the board has no block.
    package var sensors: SensorBlock?
    /// Sensor reads answered since start.
    package var sensorReads = 0

    package init(isConnected: Bool = false, device: String, confirmed: [UInt8: UInt8] = [:], commandsSent: Int = 0,
                commandsFailed: Int = 0, disconnections: Int = 0, lastError: String? = nil) {
        self.isConnected = isConnected
        self.device = device
        self.confirmed = confirmed
        self.commandsSent = commandsSent
        self.commandsFailed = commandsFailed
        self.disconnections = disconnections
        self.lastError = lastError
    }
}
