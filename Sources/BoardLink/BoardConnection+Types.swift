/// Tuning of a ``BoardConnection``.
public struct BoardOptions: Sendable, Hashable {
    /// How long the board may stay silent while a command is in flight (counted from the last
    /// byte received, so a slow board that is still talking is not cut off).
    public var replyTimeout: Duration = .milliseconds(100)
    /// How often a lost board's device is opened again.
    public var reconnectInterval: Duration = .milliseconds(300)
    /// Timeouts in a row after which the board counts as gone (closed and reopened).
    public var unansweredLimit: Int = 3

    public init() {}
}

/// What happened to the link, reported on the connection's own thread: return quickly. From
/// there, ``BoardConnection/close()`` does not wait for the thread, and
/// ``BoardConnection/writeSafeState(timeout:)`` only requests the safe state (and returns false).
public enum BoardEvent: Sendable, Hashable {
    /// The board was opened at start.
    case connected(device: String)
    /// The board went away (unplugged, hung up, stopped answering); reopening is under way.
    case disconnected(device: String, reason: String)
    /// The board is back and holds the safe state (written before anything else).
    case reconnected(device: String)
}

/// The state of a ``BoardConnection`` at one moment.
public struct BoardSnapshot: Sendable, Hashable {
    public var isConnected: Bool
    /// `serial:/dev/ttyACM0`, `midi:hw:1,0,0`, `sim`.
    public var device: String
    /// What the board acknowledged (address → value) since it was last (re)opened.
    public var confirmed: [UInt8: UInt8]
    /// Commands written to the board since start.
    public var commandsSent: Int
    /// Commands that failed (timeout, rejected) since start.
    public var commandsFailed: Int
    /// Times the board was lost.
    public var disconnections: Int
    /// The last problem, as one line naming the device; nil if none yet.
    public var lastError: String?

    public init(isConnected: Bool = false, device: String, confirmed: [UInt8: UInt8] = [:], commandsSent: Int = 0,
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
