public import SystemIO
import Synchronization

/// Hands events from the discovery loop thread to a poll loop: events queue under a lock, and
/// ``descriptor`` turns readable while any wait. Pass ``post(_:)`` as the `onEvent` handler of a
/// ``SessionBrowser`` or ``SessionAdvertiser``; poll ``descriptor`` next to your sockets; call
/// ``drain()`` when it is readable.
public final class EventMailbox<Event: Sendable>: Sendable {
    private let flag: EventFlag
    private let queue = Mutex<[Event]>([])

    public init() throws(SystemError) {
        flag = try EventFlag()
    }

    /// Readable while events wait.
    public var descriptor: Int32 { flag.descriptor.rawValue }

    public func post(_ event: Event) {
        queue.withLock { $0.append(event) }
        flag.raise()
    }

    /// Every waiting event, oldest first.
    public func drain() -> [Event] {
        flag.clear()
        return queue.withLock { q in
            let all = q
            q.removeAll()
            return all
        }
    }
}
