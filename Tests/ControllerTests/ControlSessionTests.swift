import ControlPlane
import ControlWire
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
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim"])
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

    /// Against a receiver that predates control messages (here: a bare socket that never
    /// answers), a named controller drives as before: its hello and its states leave from the
    /// same source port, and the states do not wait for an answer. Having never heard back, it
    /// ends with status 4 and one line (`--plain` is for such receivers).
    @Test func aNamedControllerDrivesAReceiverThatNeverAnswers() throws {
        let socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { socket.close() }
        let port = try socket.localAddress().port
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(port)", "--name", "Ann",
                                                      "--input", "stdin"], stdin: true)
        control.write("0.3 forward\n")
        var buffer = [UInt8](repeating: 0, count: 2048)
        var hello: (SocketAddress, ControlMessage.Hello)?
        var stateFrom: SocketAddress?
        let deadline = ContinuousClock.now + .seconds(5)
        while (hello == nil || stateFrom == nil) && ContinuousClock.now < deadline {
            guard let (n, from) = try socket.receive(into: &buffer, timeout: .milliseconds(200)) else { continue }
            let bytes = Array(buffer[..<n])
            if n == StatePacket.size, try StatePacket.decode(bytes) == ControllerState(angle: 0.3, buttons: .forward) {
                stateFrom = from
            } else if let d = try? ControlDatagram.decode(bytes), d.header.type == .hello,
                      case .hello(let h) = try ControlMessage.decode(type: .hello, payload: d.payload) {
                hello = (from, h)
            }
        }
        let (helloFrom, h) = try #require(hello, "no hello")
        #expect(h.displayName == "Ann" && h.pairingCode.isEmpty)
        #expect(stateFrom == helloFrom, "hello and states from one source port")
        control.closeStdin()
        // It drove, but nothing ever answered: the way out says so and is not a success.
        #expect(control.wait() == 4, "\(control.stderr)")
        #expect(control.stderr.hasSuffix("analog-remote: no answer from 127.0.0.1:\(port): no receiver answered (is it running, and on that port? an older receiver needs --plain)\n"),
                "\(control.stderr)")
    }
}
