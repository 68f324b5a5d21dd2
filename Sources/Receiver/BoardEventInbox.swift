import Synchronization
import SystemIO

/// Board link events crossing from the link's thread to the receive loop: ``post(_:)`` from
/// any thread queues the event and raises a flag whose descriptor the loop polls.
/// Bounded: beyond 64 queued events the oldest are dropped (a flapping link must not grow
/// memory; the loop only needs to know that the link changed).
public final class BoardEventInbox: Sendable {
    private let queue = Mutex<[BoardLinkEvent]>([])
    private let flag: EventFlag
    static let capacity = 64

    public init() throws(SystemError) {
        flag = try EventFlag()
    }

    /// Readable while events are waiting.
    public var descriptor: Int32 { flag.descriptor.rawValue }

    public func post(_ event: BoardLinkEvent) {
        queue.withLock { q in
            if q.count >= Self.capacity { q.removeFirst() }
            q.append(event)
        }
        flag.raise()
    }

    /// Takes every waiting event, oldest first.
    public func drain() -> [BoardLinkEvent] {
        flag.clear()
        return queue.withLock { q in
            let all = q
            q.removeAll()
            return all
        }
    }
}
