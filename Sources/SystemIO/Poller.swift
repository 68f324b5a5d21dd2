#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// poll(2) over a handful of descriptors, with a deadline instead of a millisecond count.
///
/// Waits to the nanosecond with ppoll(2) (a `timespec`), so a deadline 0.3 ms away waits 0.3 ms,
/// not poll's whole millisecond (the controller's minimum gap, the board link's reply timeout).
/// Where the C library has no `ppoll` (looked up at run time: Glibc's Swift module does not
/// declare it), it falls back to poll(2) with the timeout rounded up to whole milliseconds.
/// Either way a wait never ends before its timeout (unless a descriptor is ready), so a loop
/// that waits for `deadline` and then compares the clock finds it passed: no zero-wait spinning.
package enum Poller {
    package struct Events: OptionSet, Sendable, Hashable {
        package let rawValue: Int16
        package init(rawValue: Int16) { self.rawValue = rawValue }
        package static let readable = Events(rawValue: Int16(POLLIN))
        package static let writable = Events(rawValue: Int16(POLLOUT))
        /// Hang-up or error: the peer is gone (reported even when not asked for).
        package static let hangUp = Events(rawValue: Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL))
    }

    /// Waits until one of `descriptors` is ready or `timeout` passes (nil = forever).
    /// Returns the events seen for each descriptor, in order (empty events = not ready).
    package static func wait(_ descriptors: [(fd: Int32, events: Events)],
                            timeout: Duration?) throws(SystemError) -> [Events] {
        // On the stack: the receive loop and the controller call this on every wake-up.
        try withUnsafeTemporaryAllocation(of: pollfd.self, capacity: descriptors.count) { fds throws(SystemError) in
            for (i, d) in descriptors.enumerated() {
                fds.initializeElement(at: i, to: pollfd(fd: d.fd, events: d.events.rawValue, revents: 0))
            }
            try wait(fds, timeout: timeout)
            return fds.map { Events(rawValue: $0.revents) }
        }
    }

    private static func wait(_ fds: UnsafeMutableBufferPointer<pollfd>, timeout: Duration?) throws(SystemError) {
        let count = nfds_t(fds.count)
        if let precise = preciseWait {
            if let timeout {
                var ts = timespec(exactly: timeout)
                _ = try Syscall.call("ppoll") { precise(fds.baseAddress, count, &ts, nil) }
            } else {
                _ = try Syscall.call("ppoll") { precise(fds.baseAddress, count, nil, nil) }
            }
        } else {
            let ms = timeout.map(milliseconds(rounding:)) ?? -1
            _ = try Syscall.call("poll") { poll(fds.baseAddress, count, ms) }
        }
    }

    /// Waits on `fds` (in place: their `revents` are set) until one is ready or `nanoseconds`
    /// pass (nil = forever; zero or less = just look): the runner's wait, without an `Array` or
    /// a `Duration` on the way.
    static func wait(_ fds: UnsafeMutableBufferPointer<pollfd>, nanoseconds: Int64?) throws(SystemError) {
        let count = nfds_t(fds.count)
        guard let nanoseconds else {
            if let precise = preciseWait {
                _ = try Syscall.call("ppoll") { precise(fds.baseAddress, count, nil, nil) }
            } else {
                _ = try Syscall.call("poll") { poll(fds.baseAddress, count, -1) }
            }
            return
        }
        let wait = max(0, nanoseconds)
        if let precise = preciseWait {
            let limit = Int64(Int32.max)   // seconds, as in timespec(exactly:)
            var ts = timespec(tv_sec: Int(min(wait / 1_000_000_000, limit)), tv_nsec: Int(wait % 1_000_000_000))
            _ = try Syscall.call("ppoll") { precise(fds.baseAddress, count, &ts, nil) }
        } else {
            let ms = wait / 1_000_000 + (wait % 1_000_000 == 0 ? 0 : 1)
            _ = try Syscall.call("poll") { poll(fds.baseAddress, count, Int32(clamping: ms)) }
        }
    }

    package static func wait(for fd: Int32, events: Events, timeout: Duration?) throws(SystemError) -> Events {
        try wait([(fd, events)], timeout: timeout)[0]
    }

    /// Waits until `deadline` (nil = forever). Trap: EINTR restarts with the full timeout, so
    /// callers loop on their own deadline rather than trusting one call.
    package static func wait(_ descriptors: [(fd: Int32, events: Events)],
                            until deadline: ContinuousClock.Instant?) throws(SystemError) -> [Events] {
        let timeout = deadline.map { max(.zero, $0 - .now) }
        return try wait(descriptors, timeout: timeout)
    }

    /// `ppoll(2)`, when the C library has it (nil in a static binary without `dlsym`).
    typealias PreciseWait = @convention(c) (UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?) -> Int32
    static let preciseWait: PreciseWait? = dlsym(nil, "ppoll").map { unsafeBitCast($0, to: PreciseWait.self) }

    /// Rounds up, so a 0.3 ms timeout waits 1 ms rather than spinning with 0 (the fallback).
    static func milliseconds(rounding d: Duration) -> Int32 {
        if d <= .zero { return 0 }
        let (s, atto) = d.components
        let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}

extension timespec {
    /// A non-negative duration as a `timespec`, rounded up to the nanosecond (a wait never
    /// ends before the deadline it was computed from); negative = zero, absurdly long = clamped.
    init(exactly d: Duration) {
        if d <= .zero { self.init(tv_sec: 0, tv_nsec: 0); return }
        let (s, atto) = d.components
        var seconds = s
        var nanoseconds = (atto + 999_999_999) / 1_000_000_000
        if nanoseconds >= 1_000_000_000 { seconds += 1; nanoseconds -= 1_000_000_000 }
        let limit = Int64(Int32.max)   // ~68 years: far beyond any deadline, safe for every time_t
        self.init(tv_sec: Int(min(seconds, limit)), tv_nsec: Int(nanoseconds))
    }
}
