import Foundation

/// Runs `body` on a thread of its own and returns what it returned or threw: for a test's
/// blocking work (a tool that runs for seconds, a child process to wait for).
///
/// Trap: every async test shares the concurrency pool, which has one thread per core — two on
/// the CI machine. A synchronous test that blocks holds one of them for as long as it blocks;
/// two such tests that ran a tool for a minute under the full suite's load froze every other
/// test for that minute, and a test that waited 60 s for its robot to drive timed out so.
public func offThePool<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = name
        thread.start()
    }
}
