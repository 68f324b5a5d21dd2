#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

@Suite struct BatchedReceiveTests {
    /// The receiver is stopped (SIGSTOP) while a burst of different states is queued on its
    /// socket; when it runs again it reads them in one wake-up and the board gets one write:
    /// the last state's map, and no map of the states before it.
    @Test func aBurstQueuedWhileTheReceiverSleepsIsOneWrite() throws {
        let r = try RunningReceiver(["--failsafe-ms", "5000"])
        let c = try TestController(port: r.port)
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: .b))
        #expect(r.waitForMap { $0 == RunningReceiver.kitMap(led2: 255) })
        let before = r.maps.count
        var stopped = true
        defer { if stopped { r.process.signal(SIGCONT) } }
        #expect(r.process.pause(), "the receiver did not stop")
        for i in 0..<40 {
            try c.send(ControllerState(angle: Float(i - 20) / 25, buttons: i % 2 == 0 ? [.forward] : [.forward, .b]))
        }
        let last = ControllerState(angle: 0, buttons: [.forward, .a])
        try c.send(last)
        let lastMap = RunningReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255)
        r.process.signal(SIGCONT)
        stopped = false
        #expect(r.waitForMap { $0 == lastMap })
        let after = Array(r.maps.dropFirst(before))
        #expect(after.first == lastMap, "one write for the burst, the last state's: \(after.map { Hex.string($0) })")
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
        #expect(r.summary?["state"] == 43, "every datagram was still decoded: \(r.process.stdout)")
    }
}
