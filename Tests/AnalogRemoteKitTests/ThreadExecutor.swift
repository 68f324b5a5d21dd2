import Foundation
import Synchronization

/// A task executor with a thread of its own: a task that prefers it runs (and resumes after a
/// sleep or a cancel) there, not in the shared concurrency pool, which tests that block their
/// threads can starve for many seconds in the full suite.
final class ThreadExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])
    private let wake = DispatchSemaphore(value: 0)

    init(name: String) {
        // The thread keeps the executor (one per test that needs it; it idles once the test is done).
        let thread = Thread { [self] in
            while true {
                wake.wait()
                let batch = jobs.withLock { queue -> [UnownedJob] in
                    defer { queue.removeAll() }
                    return queue
                }
                for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        wake.signal()
    }
}
