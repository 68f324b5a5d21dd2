import Synchronization

/// Wakes async waiters when something they show has changed: a counter that ``bump()`` moves
/// and ``wait(past:timeout:)`` waits on. How a dashboard's push sleeps until there is news (a
/// row changed, its session ended) or its next look is due, instead of waking on a short timer.
final class ChangeNotice: Sendable {
    private struct State {
        var count = 0
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// The changes so far: pass it to ``wait(past:timeout:)`` to wait for the next one.
    var count: Int { state.withLock { $0.count } }

    /// Something changed: every waiter returns. Any thread.
    func bump() {
        let waiters = state.withLock { s in
            s.count &+= 1
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Returns once ``count`` is no longer `seen` (at once if it already moved), after
    /// `timeout`, or when the task is cancelled, whichever comes first.
    func wait(past seen: Int, timeout: Duration) async {
        guard timeout > .zero, count == seen else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.change(past: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func change(past seen: Int) async {
        let id = state.withLock { s in
            defer { s.next &+= 1 }
            return s.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                // Registered under the lock that bump() takes: a bump is either seen here or
                // resumes this continuation, never lost in between. A cancellation that came
                // before the registration is seen here too.
                let now = state.withLock { s -> Bool in
                    if s.count != seen || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
