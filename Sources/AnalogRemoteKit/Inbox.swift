import Synchronization

/// A session's incoming messages, fanned out to every `AsyncStream` made by ``subscribe()`` and
/// held, while nobody has subscribed, for the first one that does: a message that arrives before
/// the program starts iterating ``RemoteSession/messages`` is not lost.
///
/// Bounded: at most `limit` messages wait — held for the first subscriber, or queued behind any
/// one subscriber that does not keep up. A message that finds no room is dropped and
/// ``yield(_:)`` returns false, so the caller reports it (the session counts and logs drops);
/// nothing is dropped silently. The oldest are kept: what is delivered stays in order.
final class Inbox<Element: Sendable>: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        /// Arrived while nobody had subscribed; handed to the first subscriber.
        var held: [Element] = []
        var finished = false
    }

    private let state = Mutex(State())
    let limit: Int

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingOldest(limit))
        let id: Int? = state.withLock { s in
            for value in s.held { continuation.yield(value) }
            s.held = []
            guard !s.finished else { return nil }
            defer { s.next += 1 }
            s.subscribers[s.next] = continuation
            return s.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `value` to every subscriber, or holds it when there is none. False when some
    /// subscriber's queue, or the hold, was full and `value` was dropped there.
    func yield(_ value: Element) -> Bool {
        let targets: [AsyncStream<Element>.Continuation]? = state.withLock { s in
            guard s.subscribers.isEmpty else { return Array(s.subscribers.values) }
            guard s.held.count < limit else { return [] }
            s.held.append(value)
            return nil
        }
        guard let targets else { return true }
        guard !targets.isEmpty else { return false }
        var dropped = false, taken = false
        for continuation in targets {
            switch continuation.yield(value) {
            case .enqueued: taken = true
            case .dropped: dropped = true
            default: break   // terminated: that subscriber is going away
            }
        }
        if dropped { return false }
        if taken { return true }
        // Every subscriber had just gone (its stream ended, not yet unsubscribed): hold it.
        return state.withLock { s in
            guard s.held.count < limit else { return false }
            s.held.append(value)
            return true
        }
    }

    /// Ends every stream; a later subscriber gets what is still held, then the end.
    func finish() {
        let targets = state.withLock { s -> [AsyncStream<Element>.Continuation] in
            s.finished = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
