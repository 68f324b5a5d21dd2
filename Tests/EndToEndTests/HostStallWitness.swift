import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How long this machine kept a thread that does nothing but sleep from running: one thread per
/// CPU (real-time threads are spread over the CPUs by the kernel; the Glibc module offers no
/// affinity call to pin them), at a real-time priority where allowed, each sleeping 1 ms at a time and
/// noting how late it woke. On a virtual machine the host may pause a whole virtual CPU for
/// milliseconds (seen here: 9 ms on an idle guest); no priority inside the guest helps against
/// that. A timing test reads ``worst`` over its window to tell such a pause from its code's
/// drift: the witness does no work, so whatever it waited, every process on that CPU waited too.
final class HostStallWitness: Sendable {
    private let worstNanoseconds = Atomic<Int64>(0)
    private let running = Atomic<Bool>(true)

    init() {
        let cpus = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        for _ in 0..<cpus {
            let thread = Thread { [self] in watch() }
            thread.start()
        }
    }

    deinit { running.store(false, ordering: .relaxed) }

    /// The longest a witness woke late since it started, seconds.
    var worst: Double { Double(worstNanoseconds.load(ordering: .relaxed)) / 1e9 }

    func stop() { running.store(false, ordering: .relaxed) }

    private func watch() {
        var parameters = sched_param()
        parameters.sched_priority = 50   // above the test's processes (chrt -f 10): only the host or the kernel delays it
        _ = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters)
        var request = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while running.load(ordering: .relaxed) {
            let before = Self.now()
            _ = nanosleep(&request, nil)
            let late = Self.now() - before - 1_000_000
            var seen = worstNanoseconds.load(ordering: .relaxed)
            while late > seen {
                let (exchanged, current) = worstNanoseconds.compareExchange(expected: seen, desired: late, ordering: .relaxed)
                if exchanged { break }
                seen = current
            }
        }
    }

    private static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}
