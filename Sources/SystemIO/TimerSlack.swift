#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The calling thread's timer slack (Linux, prctl(2)): by default the kernel may end any timed
/// wait of a normal thread up to 50 µs late, to batch wake-ups. A loop whose deadlines are
/// sub-millisecond (the controller's minimum gap, the board link's reply timeout, the bench's
/// sender) asks for less.
///
/// Trap: the slack is per thread and inherited by threads created afterwards — call it on the
/// main thread before any other thread starts, so that every thread of the process has it.
/// It only changes timed wake-ups; a wake-up because a descriptor became ready is not delayed by
/// timer slack in the first place.
package enum TimerSlack {
    /// Sets the calling thread's slack to `nanoseconds` (1 = as exact as the timers allow).
    /// Returns false where prctl(2) is not available (looked up at run time: Glibc's Swift
    /// module does not declare it) or refuses.
    @discardableResult
    package static func tighten(to nanoseconds: UInt = 1) -> Bool {
        guard let set = prctl else { return false }
        return set(29 /* PR_SET_TIMERSLACK */, nanoseconds, 0, 0, 0) == 0
    }

    /// The calling thread's slack in nanoseconds, nil where prctl(2) is not available.
    package static var current: UInt? {
        guard let get = prctl else { return nil }
        let value = get(30 /* PR_GET_TIMERSLACK */, 0, 0, 0, 0)
        return value >= 0 ? UInt(value) : nil
    }

    private typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
    private static let prctl: Prctl? = dlsym(nil, "prctl").map { unsafeBitCast($0, to: Prctl.self) }
}
