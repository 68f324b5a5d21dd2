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
        r.process.signal(SIGSTOP)
        var stopped = true
        defer { if stopped { r.process.signal(SIGCONT) } }
        #expect(Self.waitUntilStopped(pid: r.process.pid), "the receiver did not stop")
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

    /// Waits until the kernel shows the process stopped (`T` in /proc/PID/stat): from then on it
    /// cannot read its socket.
    static func waitUntilStopped(pid: Int32, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"),
               stat[stat.index(close, offsetBy: 2)...].hasPrefix("T") { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return false
    }
}
