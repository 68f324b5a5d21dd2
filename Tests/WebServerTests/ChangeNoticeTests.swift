import Testing
@testable import WebServer

/// Judged by what the wait returns, not by the clock: the whole suite starts at once on a few
/// cores, and a task may wait its turn for many seconds. A wait the bump or the cancellation
/// failed to end lasts its full (long) timeout and says so.
@Suite struct ChangeNoticeTests {
    @Test func aBumpWakesAWaiter() async {
        let notice = ChangeNotice()
        let seen = notice.count
        async let waited = notice.wait(past: seen, timeout: .seconds(600))
        try? await Task.sleep(for: .milliseconds(20))
        notice.bump()
        #expect(await waited, "the wait ended without the change (its timeout)")
        #expect(notice.count != seen)
    }

    @Test func aChangeBeforeTheWaitReturnsAtOnce() async {
        let notice = ChangeNotice()
        let seen = notice.count
        notice.bump()
        #expect(await notice.wait(past: seen, timeout: .seconds(600)))
    }

    @Test func withoutAChangeTheWaitLastsItsTimeout() async {
        let notice = ChangeNotice()
        let start = ContinuousClock.now
        #expect(await notice.wait(past: notice.count, timeout: .milliseconds(50)) == false)
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test func cancellingTheTaskEndsTheWait() async {
        let notice = ChangeNotice()
        let start = ContinuousClock.now
        let task = Task { await notice.wait(past: notice.count, timeout: .seconds(600)) }
        try? await Task.sleep(for: .milliseconds(20))
        task.cancel()
        #expect(await task.value == false)
        // Not the 600 s timeout (however long the task waited for a thread).
        #expect(ContinuousClock.now - start < .seconds(300))
    }

    @Test func everyWaiterWakes() async {
        let notice = ChangeNotice()
        let seen = notice.count
        let woken = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 { group.addTask { await notice.wait(past: seen, timeout: .seconds(600)) } }
            try? await Task.sleep(for: .milliseconds(20))
            notice.bump()
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(woken == 5)
        #expect(notice.count == seen + 1)
    }
}
