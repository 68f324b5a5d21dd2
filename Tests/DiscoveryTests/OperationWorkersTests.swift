@testable import Discovery
import Dispatch
import Synchronization
import Testing

@Suite struct OperationWorkersTests {
    /// The point of the workers: a call that waits (a D-Bus round trip) does not hold up the
    /// next. The first job waits for the second; run one after the other they never finish.
    @Test func aWaitingJobDoesNotHoldUpTheNext() {
        let workers = OperationWorkers()
        let secondRan = DispatchSemaphore(value: 0)
        let bothDone = DispatchSemaphore(value: 0)
        workers.submit {
            if secondRan.wait(timeout: .now() + .seconds(30)) == .success { bothDone.signal() }
        }
        workers.submit { secondRan.signal() }
        #expect(bothDone.wait(timeout: .now() + .seconds(30)) == .success)
    }

    /// Every job runs, however many more than threads there are.
    @Test func everyJobRunsOnce() {
        let workers = OperationWorkers()
        let count = Mutex<[Int: Int]>([:])
        let done = DispatchSemaphore(value: 0)
        let jobs = OperationWorkers.width * 5 + 3
        for i in 0..<jobs {
            workers.submit {
                count.withLock { $0[i, default: 0] += 1 }
                done.signal()
            }
        }
        for _ in 0..<jobs { _ = done.wait(timeout: .now() + .seconds(30)) }
        let seen = count.withLock { $0 }
        #expect(seen.count == jobs)
        #expect(seen.values.allSatisfy { $0 == 1 })
    }
}
