@testable import AnalogRemoteKit
import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import Testing

/// A RemoteSession's memory under a flood: hellos of its own session from 900 sources (60 loopback
/// addresses × 15 ports), each followed by 1 KB `data` fragments with a gap in front, so that
/// everything after the gap waits for reordering. The links, the per-host links and the bytes
/// held for reordering are capped (checked from the session's own counts); run alone, the process
/// must grow by less than 8 MiB.
@Suite(.serialized) struct SessionFloodTests {
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// One source's datagrams: a hello (sequence 1), then `count` fragments of a 64 KiB message
    /// from sequence 3 on (2 is never sent).
    static func flood(session: String, count: Int, now: ContinuousClock.Instant) throws -> [[UInt8]] {
        var options = ReliableChannel.Options()
        options.window = count + 2
        var channel = ReliableChannel(connection: .random(in: 1...UInt32.max), options: options)
        try channel.send(.hello(.init(peerID: .random(in: 1...UInt64.max), displayName: "flood", session: WireText(session))))
        try channel.send(.data(channel: 2, bytes: [UInt8](repeating: 0xA5, count: 1000 * (count + 1))))
        let out = channel.poll(now: now).datagrams
        return [out[0]] + Array(out.dropFirst(2).prefix(count))
    }

    @Test func nineHundredSourcesGrowItLessThan8MiB() async throws {
        let session = try await RemoteSession(sessionID: "kit-flood", displayName: "target", discovery: false)
        let target = try SocketAddress.resolve("127.0.0.1:\(session.port)")
        let before = Self.residentBytes()
        let now = ContinuousClock.now
        var sent = 0
        for host in 0..<60 {
            for _ in 0..<15 {
                let socket = try UDPSocket.bind(port: 0, host: "127.0.\(1 + host / 200).\(2 + host % 200)")
                for datagram in try Self.flood(session: "kit-flood", count: 60, now: now) {
                    _ = try socket.send(datagram, to: target)
                    sent += 1
                }
                socket.close()
                // Paced so that the session's socket buffer takes the burst (a kernel drop would
                // make the flood smaller than it claims; the bounds below show it arrived).
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        // Settled: the session has read everything once its link count stops changing.
        var last = session.bounds
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            let now = session.bounds
            if now == last { break }
            last = now
        }
        let grown = Self.residentBytes() - before
        let bounds = session.bounds
        print("flood: \(sent) datagrams from 900 sources; RSS grew \(grown / 1024) KiB; links \(bounds.links), hellos refused \(bounds.linksRefused), buffers dropped \(bounds.buffersDropped), peak held \(bounds.peakBuffered / 1024) KiB")
        #expect(bounds.links <= 128)
        #expect(bounds.linksRefused > 0, "the flood never reached the link cap: \(bounds)")
        #expect(bounds.peakBuffered <= 4 << 20)
        #expect(bounds.buffersDropped > 0, "the flood never reached the buffer cap: \(bounds)")
        // The resident size is the whole process's: other suites running beside this one in
        // `swift test` grow it too. Run one test at a time (./run.sh test does, with
        // ANALOG_REMOTE_FLOOD_RSS=1 and --no-parallel) it is the flood's figure: under 8 MiB.
        if ProcessInfo.processInfo.environment["ANALOG_REMOTE_FLOOD_RSS"] == "1" {
            #expect(grown < 8 << 20, "grew \(grown / 1024) KiB")
        }
        await session.close()
    }
}
