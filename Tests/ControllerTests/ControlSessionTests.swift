import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `control --name` against a real receiver, on a pseudo-terminal: the status line shows the
/// receiver's name, the round-trip time and the loss rate (Protocol.md §7.5).
@Suite(.serialized) struct ControlSessionTests {
    @Test func theStatusLineShowsTheReceiverRoundTripAndLoss() throws {
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--board", "sim"])
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "\(receiver.stdout)")
        let child = try PtyChild(["control", "--peer", "127.0.0.1:\(port)", "--name", "Ann"])
        #expect(child.waitUntil { child.output.contains(" rtt ") && child.output.contains(" ms loss 0%") }, "\(child.output)")
        #expect(receiver.waitForOutput { _, err in err.contains("controller said hello: accepted [address=127.0.0.1:") && err.contains("controller=Ann]") },
                "\(receiver.stderr)")
        child.send("q")
        #expect(child.wait()?.status == 0)
        #expect(receiver.waitForOutput { _, err in err.contains("controller said bye") }, "\(receiver.stderr)")
    }
}
