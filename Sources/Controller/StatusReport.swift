import Console
import RemoteWire

/// Packets per second over the last second, from the send times.
/// Bounded: `record` drops what is older than a second too, so a controller whose status line is
/// never shown (`--quiet`, the bench) does not keep every send time of its run.
struct RateMeter {
    private var times: [ContinuousClock.Instant] = []
    private var head = 0

    /// Send times must not go backwards (a monotonic clock).
    mutating func record(_ t: ContinuousClock.Instant) {
        times.append(t)
        forget(upTo: t - .seconds(1))
    }

    mutating func rate(now: ContinuousClock.Instant) -> Int {
        forget(upTo: now - .seconds(1))
        return times.count - head
    }

    /// Moves past every time at or before `from`, compacting once the dead prefix is over half.
    private mutating func forget(upTo from: ContinuousClock.Instant) {
        while head < times.count, times[head] <= from { head += 1 }
        if head > 256, head * 2 > times.count {
            times.removeFirst(head)
            head = 0
        }
    }

    /// How many send times are kept (for the test of the bound).
    var kept: Int { times.count }
}

/// The controller's status line: `→ TARGET  [    |##  ] +0.30 rad  forward+a  50 pkt/s  INPUT`.
enum StatusReport {
    /// `note` (a session follower's account of the receiver) replaces the peer's description;
    /// `extra` (the classroom control session's parts) goes at the end.
    static func line(peer: Destination.Peer?, note: String? = nil, state: ControllerState, rate: Int, input: String,
                     stopping: Bool, sendError: String?, lead: String? = nil, extra: [String] = []) -> String {
        let target = note.map { "→ \($0)" } ?? peer.map { "→ \($0.description)" } ?? "→ (no receiver yet: nothing sent)"
        let fraction = Double(state.angle) / Double(ControllerState.maxAngle)
        let sign = state.angle < 0 ? "-" : "+"
        let magnitude = Double(state.angle.magnitude)
        let hundredths = Int((magnitude * 100).rounded())
        let angle = "\(sign)\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) rad"
        // The robot's state (``lead``) comes first: on a narrow terminal the details are cut, not it.
        var parts = (lead.map { [$0] } ?? []) + [target, "\(StatusLine.bar(fraction)) \(angle)", state.buttons.description, "\(rate) pkt/s", input] + extra
        if stopping { parts.append("stopping") }
        if let sendError {
            if !sendError.hasPrefix("no receiver") {
                parts.append("send failed: \(sendError)")
            } else if lead == nil {
                parts.insert(sendError, at: 0)   // a plain sender has no lead to say it
            }
        }
        return parts.joined(separator: "  ")
    }
}
