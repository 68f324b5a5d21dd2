#if canImport(Glibc)
import Glibc
#endif
import SystemIO
import Testing

@Suite struct SignalWatcherTests {
    /// Two watchers of one signal in one process both see it (the second must not silence the
    /// first by resetting the signal's disposition). SIGUSR1: nothing else in the tests uses it.
    @Test func twoWatchersOfOneSignalBothSeeIt() throws {
        let first = try SignalWatcher(signals: [SIGUSR1])
        let second = try SignalWatcher(signals: [SIGUSR1])
        kill(getpid(), SIGUSR1)
        for watcher in [first, second] {
            let ready = try Poller.wait(for: watcher.readableDescriptor, events: .readable, timeout: .seconds(5))
            #expect(ready.contains(.readable))
            #expect(watcher.signal == SIGUSR1)
            #expect(watcher.exitCode == 128 + SIGUSR1)
        }
    }
}
