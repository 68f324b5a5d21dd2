/// How long a receiver keeps driving on its owner's last state without a new valid one before it
/// stops the motors (Protocol.md §3.3). One type from the command line to the wire: `receive
/// --failsafe-ms`, the TXT key `failsafe=` (§6), the `accept` message's field (§7.4), the engine's
/// timeout — with its default and its ranges written here only.
public struct FailsafeTimeout: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let milliseconds: Int

    public init(milliseconds: Int) { self.milliseconds = milliseconds }

    /// 250 ms: what `receive` uses and announces by default, and what a controller assumes when a
    /// receiver does not say.
    public static let standard = FailsafeTimeout(milliseconds: 250)
    /// What a receiver may be started with (`receive --failsafe-ms`).
    public static let receiverRange = 50...5000
    /// What an announcement may carry (Protocol.md §6, also `advertise --failsafe`): a `failsafe=`
    /// outside it counts as absent. Wider than ``receiverRange``: other receivers may choose more.
    public static let announcedRange = 1...600_000

    public var duration: Duration { .milliseconds(milliseconds) }
    public var description: String { "\(milliseconds) ms" }
    public static func < (a: Self, b: Self) -> Bool { a.milliseconds < b.milliseconds }
}

/// How often a controller sends its state, in packets per second: the one default and range of
/// `control --rate` and `receive --expected-rate`, and what a controller falls back to.
public enum SendRate {
    public static let standardHz = 50
    /// What `control --rate` and `receive --expected-rate` accept.
    public static let range = 1...1000
    /// What an announcement may carry (Protocol.md §6, also `advertise --rate`, `browse --rate`):
    /// a `rate=` outside it counts as absent.
    public static let announcedRange = 1...10_000
}

extension ClosedRange where Bound == Int {
    /// `50…5000`: a range as the error messages and help texts write it.
    public var text: String { "\(lowerBound)…\(upperBound)" }
}
