import Synchronization

/// A value set once (the first ``resolve(_:)`` wins) and awaited by any number of tasks: how a
/// loop's thread tells async callers "connected", "refused", "finished".
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Returns whether this call set the value.
    @discardableResult
    func resolve(_ value: Value) -> Bool {
        let waiters = state.withLock { s -> [CheckedContinuation<Value, Never>]? in
            guard s.value == nil else { return nil }
            s.value = value
            defer { s.waiters = [] }
            return s.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    var current: Value? { state.withLock { $0.value } }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Value? in
                    if let value = s.value { return value }
                    s.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// The value, or `expired` once `limit` has passed, or `cancelled` as soon as the awaiting
    /// task is cancelled — whichever comes first is the value for every waiter.
    func value(within limit: Duration, expired: @escaping @Sendable () -> Value,
               cancelled: @escaping @Sendable () -> Value) async -> Value {
        let timer = Task {
            try? await Task.sleep(for: limit)
            resolve(expired())
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await value
        } onCancel: {
            resolve(cancelled())
        }
    }
}
