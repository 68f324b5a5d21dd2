import Synchronization

/// Fans one producer's values out to any number of `AsyncStream`s, each made by ``subscribe()``.
///
/// The producer (a loop's own thread) calls ``yield(_:)``; nothing of the subscriber runs on that
/// thread: `AsyncStream` hands values over to whatever task iterates. A subscriber that stops
/// iterating (its task cancelled, its loop left) is dropped; the others and the producer go on.
/// After ``finish()`` every stream ends, and a new subscription ends at once.
final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var finished = false
        /// What a new subscriber gets first (the latest robot state; the peers known so far).
        var replay: [Element] = []
    }

    private let state = Mutex(State())
    private let bufferLimit: Int

    /// `bufferLimit`: how many values a slow subscriber may fall behind before the oldest are
    /// dropped (a bound, so one stalled reader cannot grow memory).
    init(bufferLimit: Int = 1024) {
        self.bufferLimit = bufferLimit
    }

    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id: Int? = state.withLock { s in
            for value in s.replay { continuation.yield(value) }
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

    func yield(_ value: Element) {
        let targets = state.withLock { Array($0.subscribers.values) }
        for continuation in targets { continuation.yield(value) }
    }

    /// Sets what a later subscriber receives first.
    func setReplay(_ values: [Element]) {
        state.withLock { $0.replay = values }
    }

    func finish() {
        let targets = state.withLock { s -> [AsyncStream<Element>.Continuation] in
            s.finished = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
