import Foundation
import TestSupport
import Testing

/// A receiver started with every signal blocked (as a child spawned from a libdispatch worker
/// thread is: it inherits that thread's full mask) still stops on SIGTERM and reloads on SIGHUP:
/// the signal hub's thread takes every signal.
@Suite struct BlockedSignalsEndToEndTests {
    @Test func aReceiverStartedWithEverySignalBlockedStillStopsOnSigterm() throws {
        let blockThenRun = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals()); os.execv(sys.argv[1], sys.argv[1:])"
        let receiver = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                        ["-c", blockThenRun, Paths.analogRemote.path, "receive", "--no-advertise", "--port", "0", "--board", "sim"])
        defer { receiver.stop() }
        #expect(receiver.waitForOutput { out, _ in out.contains("receiving on udp port") }, "\(receiver.stderr)")
        let blocked = try String(contentsOfFile: "/proc/\(receiver.pid)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
        // Its main thread still blocks them: the mask it was started with.
        #expect(blocked != nil && blocked?.hasSuffix("0000000000000000") == false, "\(String(describing: blocked))")
        receiver.signal(SIGTERM)
        #expect(receiver.wait() == 0)
        #expect(receiver.stderr.contains("stopping on SIGTERM") && receiver.stdout.contains("summary "), "\(receiver.stderr)")
    }
}
