#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Foundation
@testable import SystemIO
import Testing

@Suite struct PollerTests {
    @Test func glibcHasTheNanosecondWait() {
        // Without ppoll every sub-millisecond deadline would wait a whole millisecond.
        #expect(Poller.preciseWait != nil)
    }

    @Test func timeoutsBecomeTimespecsRoundedUpToTheNanosecond() {
        let cases: [(Duration, Int, Int)] = [
            (.zero, 0, 0),
            (.milliseconds(-3), 0, 0),
            (.microseconds(300), 0, 300_000),
            (.milliseconds(1), 0, 1_000_000),
            (.seconds(2) + .nanoseconds(5), 2, 5),
            // 1 attosecond over a nanosecond boundary waits the next nanosecond, carried into seconds.
            (Duration(secondsComponent: 1, attosecondsComponent: 999_999_999_000_000_001), 2, 0),
            (Duration(secondsComponent: 0, attosecondsComponent: 1), 0, 1),
            (.seconds(Int64.max / 2), Int(Int32.max), 0),
        ]
        for (d, s, ns) in cases {
            let t = timespec(exactly: d)
            #expect(t.tv_sec == s && t.tv_nsec == ns, "\(d) → \(t.tv_sec) s \(t.tv_nsec) ns")
        }
    }

    @Test func theFallbackRoundsUpToWholeMilliseconds() {
        #expect(Poller.milliseconds(rounding: .zero) == 0)
        #expect(Poller.milliseconds(rounding: .microseconds(300)) == 1)
        #expect(Poller.milliseconds(rounding: .microseconds(1001)) == 2)
    }

    @Test func aDeadlineWaitNeverEndsBeforeItsDeadline() throws {
        // The loops wait for a deadline and then compare the clock: an early return would make
        // them spin with zero timeouts. Sub-millisecond deadlines are the ones ppoll changed.
        let (r, w) = try pipePair()
        defer { close(r); close(w) }
        for micros in [1, 50, 300, 999, 1500] {
            let deadline = ContinuousClock.now + .microseconds(micros)
            let ready = try Poller.wait([(r, .readable)], until: deadline)
            #expect(ready == [[]])
            #expect(ContinuousClock.now >= deadline, "woke before a \(micros) µs deadline")
        }
    }

    @Test func readinessComesBackInTheOrderAsked() throws {
        let (r, w) = try pipePair()
        defer { close(r); close(w) }
        #expect(write(w, "x", 1) == 1)
        let ready = try Poller.wait([(w, .writable), (r, .readable)], timeout: nil)
        #expect(ready == [.writable, .readable])
        let idle = try Poller.wait([(r, .writable)], timeout: .zero)
        #expect(idle == [[]])
        #expect(try Poller.wait([], timeout: .microseconds(10)).isEmpty)
    }

    @Test func hangUpIsReportedUnasked() throws {
        let (r, w) = try pipePair()
        close(w)
        defer { close(r) }
        let ready = try Poller.wait(for: r, events: .readable, timeout: .seconds(5))
        #expect(!ready.intersection(.hangUp).isEmpty)
    }

    @Test func timerSlackIsTightenedForThisThreadAndInheritedByNewOnes() throws {
        // On a thread of its own, so the test runner's threads keep theirs.
        let seen = LockedBox<(UInt?, UInt?)>((nil, nil))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = TimerSlack.tighten()
            let own = TimerSlack.current
            let child = Thread { seen.value = (own, TimerSlack.current); done.signal() }
            child.start()
        }
        thread.start()
        done.wait()
        #expect(seen.value.0 == 1)
        #expect(seen.value.1 == 1)
    }

    private func pipePair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SystemError(call: "pipe", errno: errno) }
        return (fds[0], fds[1])
    }
}

private final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}
