import Dispatch
import Foundation

/// A thread that runs one closure, and can be joined.
final class BenchThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = done
        let thread = Thread {
            body()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the closure to return.
    func join() { done.wait() }

    /// Waits at most `timeout`; returns whether the closure returned.
    func join(timeout: Duration) -> Bool {
        let (s, atto) = timeout.components
        let nanos = Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)
        return done.wait(timeout: .now() + .nanoseconds(nanos)) == .success
    }
}
