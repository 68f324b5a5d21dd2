#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// poll(2) over a handful of descriptors, with a deadline instead of a millisecond count.
public enum Poller {
    public struct Events: OptionSet, Sendable, Hashable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: Int16(POLLIN))
        public static let writable = Events(rawValue: Int16(POLLOUT))
        /// Hang-up or error: the peer is gone (reported even when not asked for).
        public static let hangUp = Events(rawValue: Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL))
    }

    /// Waits until one of `descriptors` is ready or `timeout` passes (nil = forever).
    /// Returns the events seen for each descriptor, in order (empty events = not ready).
    public static func wait(_ descriptors: [(fd: Int32, events: Events)],
                            timeout: Duration?) throws(SystemError) -> [Events] {
        var fds = descriptors.map { pollfd(fd: $0.fd, events: $0.events.rawValue, revents: 0) }
        let ms = timeout.map(milliseconds(rounding:)) ?? -1
        _ = try Syscall.call("poll") { poll(&fds, nfds_t(fds.count), ms) }
        return fds.map { Events(rawValue: $0.revents) }
    }

    public static func wait(for fd: Int32, events: Events, timeout: Duration?) throws(SystemError) -> Events {
        try wait([(fd, events)], timeout: timeout)[0]
    }

    /// Waits until `deadline` (nil = forever). Trap: EINTR restarts with the full timeout, so
    /// callers loop on their own deadline rather than trusting one call.
    public static func wait(_ descriptors: [(fd: Int32, events: Events)],
                            until deadline: ContinuousClock.Instant?) throws(SystemError) -> [Events] {
        let timeout = deadline.map { max(.zero, $0 - .now) }
        return try wait(descriptors, timeout: timeout)
    }

    /// Rounds up, so a 0.3 ms timeout waits 1 ms rather than spinning with 0.
    static func milliseconds(rounding d: Duration) -> Int32 {
        if d <= .zero { return 0 }
        let (s, atto) = d.components
        let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}
