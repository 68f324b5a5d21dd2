import Testing
@testable import WebServer

@Suite struct ChangeNoticeTests {
    @Test func aBumpWakesAWaiterLongBeforeItsTimeout() async {
        let notice = ChangeNotice()
        let seen = notice.count
        let start = ContinuousClock.now
        async let waited: Void = notice.wait(past: seen, timeout: .seconds(30))
        try? await Task.sleep(for: .milliseconds(20))
        notice.bump()
        await waited
        #expect(notice.count != seen)
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func aChangeBeforeTheWaitReturnsAtOnce() async {
        let notice = ChangeNotice()
        let seen = notice.count
        notice.bump()
        let start = ContinuousClock.now
        await notice.wait(past: seen, timeout: .seconds(30))
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func withoutAChangeTheWaitLastsItsTimeout() async {
        let notice = ChangeNotice()
        let start = ContinuousClock.now
        await notice.wait(past: notice.count, timeout: .milliseconds(50))
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test func cancellingTheTaskEndsTheWait() async {
        let notice = ChangeNotice()
        let start = ContinuousClock.now
        let task = Task { await notice.wait(past: notice.count, timeout: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(20))
        task.cancel()
        await task.value
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func everyWaiterWakes() async {
        let notice = ChangeNotice()
        let seen = notice.count
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await notice.wait(past: seen, timeout: .seconds(30)) } }
            try? await Task.sleep(for: .milliseconds(20))
            notice.bump()
        }
        #expect(notice.count == seen + 1)
    }
}
