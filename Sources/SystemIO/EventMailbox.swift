import Synchronization

/// Hands events from another thread (a device link, the DNS-SD loop) to a poll loop: events
/// queue under a lock, and ``descriptor`` turns readable while any wait. Poll ``descriptor``
/// next to your sockets; call ``drain()`` when it is readable.
///
/// Bounded: beyond ``capacity`` queued events the oldest are dropped, so a flapping source
/// cannot grow memory while the loop is busy (the loop needs the latest news, not every one).
package final class EventMailbox<Event: Sendable>: Sendable {
    private let flag: EventFlag
    private let queue = Mutex<[Event]>([])
    package let capacity: Int

    package init(capacity: Int = 256) throws(SystemError) {
        precondition(capacity > 0)
        flag = try EventFlag()
        self.capacity = capacity
    }

    /// Readable while events wait.
    package var descriptor: Int32 { flag.descriptor.rawValue }

    /// Queues `event` from any thread and wakes the loop.
    package func post(_ event: Event) {
        queue.withLock { q in
            if q.count >= capacity { q.removeFirst(q.count - capacity + 1) }
            q.append(event)
        }
        flag.raise()
    }

    /// Wakes the loop without an event (it looks at what else changed: a value kept elsewhere).
    package func wake() {
        flag.raise()
    }

    /// Every waiting event, oldest first. The flag is cleared before the queue is taken, so an
    /// event posted in between leaves the flag raised: the loop wakes once more, never misses it.
    package func drain() -> [Event] {
        flag.clear()
        return queue.withLock { q in
            let all = q
            q.removeAll()
            return all
        }
    }
}
