import Synchronization

/// Fans one producer's values out to any number of `AsyncStream`s, each made by ``subscribe()``.
///
/// The producer (a loop's own thread) calls ``yield(_:)``; nothing of the subscriber runs on that
/// thread: `AsyncStream` hands values over to whatever task iterates. A subscriber that stops
/// iterating (its task cancelled, its loop left) is dropped; the others and the producer go on.
/// After ``finish()`` every stream ends, and a new subscription ends at once.
///
/// Two kinds, one per use:
/// - **Latest news** (`holdsUntilSubscribed: false`: robot states, peer changes): a new subscriber
///   starts with the ``setReplay(_:)`` values; a slow one loses the oldest values it has not read.
/// - **An inbox** (`true`: a session's messages): values that arrive while nobody has subscribed
///   are held for the first subscriber, and a slow subscriber keeps the oldest (what is delivered
///   stays in order). At most `bufferLimit` values wait — held, or queued behind any one
///   subscriber; a value that finds no room is dropped there and ``yield(_:)`` returns false, so
///   the caller reports it: nothing is dropped silently.
final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var finished = false
        /// What a new subscriber gets first (the latest robot state; the peers known so far).
        var replay: [Element] = []
        /// An inbox's values that arrived while nobody had subscribed; handed to the first subscriber.
        var held: [Element] = []
    }

    private let state = Mutex(State())
    let bufferLimit: Int
    let holdsUntilSubscribed: Bool

    /// `bufferLimit`: how many values may wait for one subscriber (a bound, so one stalled reader
    /// cannot grow memory). `holdsUntilSubscribed`: an inbox (see the type's comment).
    init(bufferLimit: Int = 1024, holdsUntilSubscribed: Bool = false) {
        precondition(bufferLimit > 0)
        self.bufferLimit = bufferLimit
        self.holdsUntilSubscribed = holdsUntilSubscribed
    }

    func subscribe() -> AsyncStream<Element> {
        let policy: AsyncStream<Element>.Continuation.BufferingPolicy =
            holdsUntilSubscribed ? .bufferingOldest(bufferLimit) : .bufferingNewest(bufferLimit)
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: policy)
        let id: Int? = state.withLock { s in
            for value in s.replay + s.held { continuation.yield(value) }
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

    /// Delivers `value` to every subscriber (an inbox with none holds it). False when some
    /// subscriber's queue, or an inbox's hold, was full and `value` was dropped there.
    @discardableResult
    func yield(_ value: Element) -> Bool {
        let targets: [AsyncStream<Element>.Continuation]? = state.withLock { s in
            guard s.subscribers.isEmpty, holdsUntilSubscribed else { return Array(s.subscribers.values) }
            guard s.held.count < bufferLimit else { return [] }
            s.held.append(value)
            return nil
        }
        guard let targets else { return true }
        guard !targets.isEmpty || !holdsUntilSubscribed else { return false }
        var dropped = false, taken = false
        for continuation in targets {
            switch continuation.yield(value) {
            case .enqueued: taken = true
            case .dropped: dropped = true
            default: break   // terminated: that subscriber is going away
            }
        }
        if dropped { return false }
        if taken || !holdsUntilSubscribed { return true }
        // Every subscriber had just gone (its stream ended, not yet unsubscribed): hold it.
        return state.withLock { s in
            guard s.held.count < bufferLimit else { return false }
            s.held.append(value)
            return true
        }
    }

    /// Sets what a later subscriber receives first.
    func setReplay(_ values: [Element]) {
        state.withLock { $0.replay = values }
    }

    /// Ends every stream; a later subscriber gets the replay and what an inbox still holds, then the end.
    func finish() {
        let targets = state.withLock { s -> [AsyncStream<Element>.Continuation] in
            s.finished = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
