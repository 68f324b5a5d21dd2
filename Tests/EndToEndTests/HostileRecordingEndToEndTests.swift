import Foundation
import TestSupport
import Testing

/// A crafted 16 MiB recording — every line as long as a line may be (64 KiB), each an object of
/// thousands of distinct keys — is read in time linear in its size: `plot` and `control --input
/// replay:` finish within 2 s on a release build (5 s on a debug one). A duplicate-key check that
/// scanned the keys seen so far took seconds per megabyte here.
@Suite(.serialized) struct HostileRecordingEndToEndTests {
    static let header = #"{"format":"analog-remote-recording","version":1,"kind":"drive","start_unix_ms":0,"input":"script:x"}"#
    static let bound: Double = Paths.analogRemote.path.contains("/debug/") ? 5 : 2

    /// One entry of an event this version does not know (so it is read and skipped) holding
    /// distinct keys up to `bytes` bytes.
    static func wideLine(_ bytes: Int) -> String {
        var line = #"{"t":0,"e":"x-pad""#
        var k = 0
        while line.utf8.count < bytes - 16 {
            line += ",\"k\(k)\":0"
            k += 1
        }
        return line + "}"
    }

    /// header, a state, wide lines up to 16 MiB, a state; `tail` last.
    static func crafted(tail: String?) -> String {
        let wide = wideLine(63 * 1024)
        var lines = [header, #"{"t":0,"e":"state","angle":0.1,"buttons":1}"#]
        while lines.count * wide.utf8.count < 16 << 20 { lines.append(wide) }
        lines.append(#"{"t":0.5,"e":"state","angle":0.0,"buttons":0}"#)
        if let tail { lines.append(tail) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func timed(_ arguments: [String]) throws -> (ChildProcess, Int32?, Double) {
        let start = ContinuousClock.now
        let p = try ChildProcess(analogRemote: arguments)
        let status = p.wait(timeout: .seconds(120))
        let (whole, atto) = (ContinuousClock.now - start).components
        let seconds = Double(whole) + Double(atto) / 1e18
        return (p, status, seconds)
    }

    @Test func plotAndReplayReadA16MiBCraftedRecordingInLinearTime() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/wide.jsonl"
        try Self.crafted(tail: nil).write(toFile: good, atomically: false, encoding: .utf8)
        let size = (try FileManager.default.attributesOfItem(atPath: good)[.size] as? Int) ?? 0
        #expect(size >= 16 << 20)

        let (plot, plotStatus, plotSeconds) = try Self.timed(["plot", good, "-o", dir + "/wide.svg"])
        print("plot of a \(size >> 20) MiB crafted recording: \(String(format: "%.2f", plotSeconds)) s (bound \(Self.bound) s)")
        #expect(plotStatus == 0, "\(plot.stderr)")
        #expect(plotSeconds < Self.bound)

        // The same file with a bad last line: replay reads every line before it refuses it.
        let bad = dir + "/wide-bad.jsonl"
        let text = Self.crafted(tail: "}{")
        try text.write(toFile: bad, atomically: false, encoding: .utf8)
        let last = text.split(separator: "\n").count
        let (replay, replayStatus, replaySeconds) = try Self.timed(["control", "--plain", "--quiet", "--peer", "127.0.0.1:9", "--input", "replay:\(bad)"])
        print("control --input replay: of a \(size >> 20) MiB crafted recording: \(String(format: "%.2f", replaySeconds)) s (bound \(Self.bound) s)")
        #expect(replayStatus == 2, "\(replay.stderr)")
        #expect(replay.stderr.contains("replay \(bad):\(last): "), "the last line is the one refused: \(replay.stderr)")
        #expect(replaySeconds < Self.bound)
    }

    /// Past the 64 MiB cap a file is refused at once with one line, whatever it holds.
    @Test func aRecordingOver64MiBIsRefusedAtOnce() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let big = dir + "/big.jsonl"
        FileManager.default.createFile(atPath: big, contents: Data(Self.header.utf8 + [0x0A]))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.truncate(atOffset: UInt64(65 << 20))
        try handle.close()
        let (plot, status, seconds) = try Self.timed(["plot", big, "-o", dir + "/big.svg"])
        print("plot of a 65 MiB file: refused in \(String(format: "%.2f", seconds)) s")
        #expect(status == 2, "\(plot.stderr)")
        #expect(plot.stderr.split(separator: "\n").count == 1 && plot.stderr.contains("larger than 64 MiB"), "\(plot.stderr)")
        #expect(seconds < Self.bound)
    }
}
