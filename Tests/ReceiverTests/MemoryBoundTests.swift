import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Issue 19, item 5: 1,000 sources each sending 256 out-of-order reliable fragments (the
/// classmate's attack, which made the receiver hold +295 MiB) leave the receiver's peak resident
/// memory under 64 MiB: a global cap on reordering buffers, the oldest non-owner's dropped first.
///
/// `--accept any`, so that only the per-source rate limit stands between the attack and the
/// buffers (under `first` the shared budget for non-owners would already starve it). The
/// fragments go round-robin over the sources, so each stays under its own rate limit and all of
/// them reach the reliable channels. Loopback only; about 260 MB of traffic.
@Suite(.serialized) struct MemoryBoundTests {
    static let sources = 1_000
    static let fragments = 256

    @Test func outOfOrderFragmentsFromAThousandSourcesStayUnder64MiB() throws {
        let r = try RunningReceiver(["--accept", "any", "--failsafe-ms", "5000"])
        let owner = try TestController(port: r.port)
        try owner.send(.neutral)
        let sockets = try (0..<Self.sources).map { _ in try TestController(port: r.port) }
        // A `data` datagram (reliable, fragment 0 of 2) with sequence 2…257: sequence 1 never
        // comes, so every one of them waits in the reordering buffer.
        func fragment(instance: UInt32, sequence: UInt32) -> [UInt8] {
            var d: [UInt8] = [0x41, 0x52, 0x01, 0x07]
            for v in [instance, sequence, 0] { d += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
            d += [0, 0, 0, 2]
            d += [UInt8](repeating: 0xA5, count: 1024 - d.count)
            return d
        }
        var sent = 0
        for k in 0..<Self.fragments {
            for (i, s) in sockets.enumerated() {
                try s.send(raw: fragment(instance: UInt32(i + 1), sequence: UInt32(k + 2)))
                sent += 1
            }
            r.waitUntilDrained()
        }
        #expect(r.waitUntilDrained())
        // The owner still drives: the receiver is alive and answering (resting first: the
        // attack took longer than the failsafe timeout).
        try owner.send(.neutral)
        try owner.send(ControllerState(angle: 0, buttons: .forward))
        #expect(r.waitForMap { $0 == RunningReceiver.kitMap(left: 0xC0, right: 0x40) })
        let peak = try #require(Self.peakResidentKiB(pid: r.process.pid))
        let drops = r.socketStats()?.drops ?? 0
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
        let s = try #require(r.summary)
        // Most of the attack reached the receiver (else the bound would prove nothing).
        #expect(s["control"]! >= sent / 2, "only \(s["control"]!) of \(sent) fragments were read (kernel drops \(drops), limited \(s["limited"]!))")
        #expect(peak < 64 * 1024, "peak RSS \(peak / 1024) MiB")
        print("memory bound: \(sent) fragments sent, \(s["control"]!) read, peak RSS \(peak / 1024) MiB")
    }

    /// `VmHWM` of /proc/PID/status: the peak resident set size, in KiB.
    static func peakResidentKiB(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}
