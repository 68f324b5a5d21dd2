#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization

/// A few threads that make and free dns_sd operations for a ``LoopCore``, so that N of them
/// cost about the time of one.
///
/// Why: Avahi's compat layer gives every `DNSServiceRef` a D-Bus connection of its own. Making
/// one (`DNSServiceResolve`, `DNSServiceQueryRecord`) connects, authenticates and asks the
/// daemon several things, each a round trip, before it returns; freeing one asks the daemon to
/// free its browser and joins the ref's thread. On one thread a session of 30 receivers costs
/// 90 of each in a row, and the last receiver's address arrives long after the first. The
/// round trips are waits, not work, so they overlap well.
///
/// Contract: a job runs on one of ``width`` threads, in no particular order. The threads start
/// on the first job and block (never poll) while there is none; they live as long as the
/// process, as the loop thread does.
final class OperationWorkers: Sendable {
    typealias Job = @Sendable () -> Void

    /// How many calls overlap: enough to hide the round trips of a class at once, few enough
    /// that the daemons are not asked for dozens of connections in the same instant.
    static let width = 8

    private let queue = Mutex<(jobs: [Job], started: Int)>(([], 0))
    private let ready = DispatchSemaphore(value: 0)

    /// Runs `job` on a worker thread soon (on the caller's, at once, if no thread can be made).
    func submit(_ job: @escaping Job) {
        let needsThread = queue.withLock { q -> Bool in
            q.jobs.append(job)
            guard q.started < Self.width else { return false }
            q.started += 1
            return true
        }
        if needsThread && !startThread() {
            let runHere = queue.withLock { q -> Job? in
                q.started -= 1
                return q.started == 0 ? q.jobs.popLast() : nil
            }
            if let runHere { runHere(); return }
        }
        ready.signal()
    }

    private func take() -> Job {
        ready.wait()
        return queue.withLock { q in q.jobs.removeFirst() }
    }

    private func startThread() -> Bool {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&thread, nil, workerMain, box) == 0 else {
            Unmanaged<OperationWorkers>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    fileprivate func serve() -> Never {
        while true { take()() }
    }
}

private func workerMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    Unmanaged<OperationWorkers>.fromOpaque(argument).takeRetainedValue().serve()
}
