import Discovery
import RemoteWire

/// How often a controller sends, given what it was asked for and the receiver's contract.
///
/// Rules (Protocol.md §6, "Timing contract"), all as periods, the shortest wins:
/// 1. the user's `--rate` (never send slower than asked),
/// 2. the receiver's expected rate (`rate=`),
/// 3. a fifth of the receiver's failsafe (`failsafe=`): five packets per failsafe window, so
///    four in a row may be lost before the receiver stops the motors,
/// 4. 50 Hz when neither the user nor a receiver said anything.
/// The result is never shorter than ``minimumPeriod``; when that floor breaks rule 3 the plan
/// says so (``honoursFailsafe`` false) and the caller warns.
package struct SendCadence: Equatable, Sendable {
    package enum Bound: String, Equatable, Sendable {
        case requestedRate = "your --rate"
        case receiverRate = "the receiver's rate"
        case failsafe = "the receiver's failsafe"
        case standard = "the standard rate"
        case floor = "the fastest rate this controller sends"
    }

    package static let packetsPerFailsafe = 5
    package static let minimumPeriod: Duration = .milliseconds(2)
    package static let standardRateHz = SendRate.standardHz

    package let period: Duration
    /// Which rule set the period.
    package let boundBy: Bound
    /// True when at least ``packetsPerFailsafe`` packets fit in the receiver's failsafe window
    /// (always true without a receiver contract).
    package let honoursFailsafe: Bool

    package static func plan(requestedRateHz: Int?, receiver: TimingContract?) -> SendCadence {
        plan(requestedPeriod: requestedRateHz.flatMap { $0 > 0 ? .seconds(1) / $0 : nil }, receiver: receiver)
    }

    /// The same rules with the user's request as a period (`control --rate` takes fractional
    /// rates such as 2.5 Hz); nil when the user asked for nothing.
    package static func plan(requestedPeriod: Duration?, receiver: TimingContract?) -> SendCadence {
        var candidates: [(Duration, Bound)] = []
        if let p = requestedPeriod, p > .zero { candidates.append((p, .requestedRate)) }
        if let c = receiver {
            if c.rateHz > 0 { candidates.append((.seconds(1) / c.rateHz, .receiverRate)) }
            if c.failsafeMilliseconds > 0 {
                candidates.append((c.failsafe.duration / packetsPerFailsafe, .failsafe))
            }
        }
        if candidates.isEmpty { candidates.append((.seconds(1) / standardRateHz, .standard)) }
        // The first of equal periods wins, so ties name the user's request first.
        var best = candidates[0]
        for c in candidates.dropFirst() where c.0 < best.0 { best = c }
        if best.0 < minimumPeriod { best = (minimumPeriod, .floor) }
        let honours = receiver.map { best.0 * packetsPerFailsafe <= $0.failsafe.duration } ?? true
        return SendCadence(period: best.0, boundBy: best.1, honoursFailsafe: honours)
    }

    /// The period as a whole rate for display (rounded), e.g. 50.
    package var rateHz: Int {
        let ns = period.components.seconds * 1_000_000_000 + period.components.attoseconds / 1_000_000_000
        return ns > 0 ? Int((1_000_000_000 + ns / 2) / ns) : 0
    }
}
