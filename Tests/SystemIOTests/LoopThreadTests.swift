#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemIO
import Testing

@Suite struct LoopThreadTests {
    @Test func aThreadNeverStartedIsWaitedForAtOnce() throws {
        let thread = try LoopThread(name: "never")
        #expect(!thread.hasStarted)
        #expect(!thread.hasEnded)
        #expect(thread.wait(timeout: .seconds(60)))
    }

    @Test func theBodyRunsOnceAndItsEndIsSeen() throws {
        let thread = try LoopThread(name: "once")
        let runs = Atomic<Int>(0)
        let gate = try EventFlag()
        #expect(thread.start {
            runs.add(1, ordering: .relaxed)
            // Held until the test lets it go: the thread has started but not ended.
            _ = try? Poller.wait(for: gate.descriptor.rawValue, events: .readable, timeout: .seconds(60))
        })
        #expect(!thread.start { runs.add(100, ordering: .relaxed) })
        #expect(thread.hasStarted)
        // A body still running is not waited for past the timeout.
        #expect(!thread.wait(timeout: .milliseconds(20)))
        #expect(!thread.hasEnded)
        gate.raise()
        #expect(thread.wait(timeout: .seconds(60)))
        #expect(thread.hasEnded)
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test func theThreadCarriesItsName() throws {
        let thread = try LoopThread(name: "a-name-longer-than-fifteen-bytes")
        let seen = Mutex<String?>(nil)
        thread.start {
            // The thread's own comm, as `ps -L` shows it.
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = read(fd, &buffer, buffer.count)
            if n > 0 { seen.withLock { $0 = String(decoding: buffer[..<n], as: UTF8.self).trimmingSuffix("\n") } }
        }
        #expect(thread.wait(timeout: .seconds(60)))
        #expect(seen.withLock { $0 } == "a-name-longer-t")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
