import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An idle `analog-remote receive` (a simulated board, sensors not read, nobody driving) sleeps
/// until something happens: no thread looks at the clock ten times a second. Counted as the
/// built binary's voluntary context switches (its sleeps) summed over its threads across 5 s.
/// What is left is the board link's once-a-second look; a link thread that looks once per reply
/// timeout (100 ms) makes about ten.
@Suite struct IdleReceiveWakeupTests {
    @Test func anIdleReceiverSleepsBetweenEvents() throws {
        let receiver = try ChildProcess(analogRemote: ["receive", "--config", "/dev/null", "--quiet", "--no-advertise", "--port", "0",
                                                       "--board", "sim", "--sensor-rate", "0"])
        defer { receiver.signal(SIGTERM); _ = receiver.wait() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") }, "\(receiver.stderr)")
        // Past the start-up (the probe, the safe state, the first second of a busy link).
        Thread.sleep(forTimeInterval: 2.5)
        let before = ProcessSleeps.count(receiver.pid), start = ContinuousClock.now
        Thread.sleep(forTimeInterval: 5)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(ProcessSleeps.count(receiver.pid) - before) / seconds
        print("idle receive: \(String(format: "%.1f", rate)) wake-ups a second")
        #expect(rate < 4, "an idle receiver woke \(rate) times a second")
    }
}
