import Foundation
import TestSupport
import Testing

/// A crafted 16 MiB recording — every line as long as a line may be (64 KiB), each an object of
/// thousands of distinct keys — is read in time linear in its size: `plot` and `control --input
/// replay:` finish within 2 s of CPU on a release build (5 s on a debug one). A duplicate-key check that
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
        var size = 0
        while size < 16 << 20 {
            lines.append(wide)
            size += wide.utf8.count + 1
        }
        lines.append(#"{"t":0.5,"e":"state","angle":0.0,"buttons":0}"#)
        if let tail { lines.append(tail) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Runs the binary under `/usr/bin/time` when there is one and returns the process, its
    /// status, the wall time and the CPU time (user + system) it used. The bound is on CPU time
    /// when it is known: on a machine shared by parallel builds the wall clock measures the
    /// scheduler (a 3 s parse took 11 s of wall time at load 20 on two cores); a quadratic reader
    /// costs CPU whatever the load. Without `/usr/bin/time`, the wall time is all there is.
    static func timed(_ arguments: [String]) throws -> (ChildProcess, Int32?, wall: Double, cpu: Double) {
        let time = "/usr/bin/time"
        let measured = FileManager.default.isExecutableFile(atPath: time)
        let start = ContinuousClock.now
        let p = measured ? try ChildProcess(URL(fileURLWithPath: time), ["-f", "cpu %U %S", Paths.analogRemote.path] + arguments)
            : try ChildProcess(analogRemote: arguments)
        let status = p.wait(timeout: .seconds(180))
        let (whole, atto) = (ContinuousClock.now - start).components
        let wall = Double(whole) + Double(atto) / 1e18
        guard measured, let line = p.stderr.split(separator: "\n").last(where: { $0.hasPrefix("cpu ") }) else { return (p, status, wall, wall) }
        let parts = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        return (p, status, wall, parts.reduce(0, +))
    }

    static func stderr(_ p: ChildProcess) -> String {
        p.stderr.split(separator: "\n").filter { !$0.hasPrefix("cpu ") && !$0.hasPrefix("Command exited with") }.joined(separator: "\n")
    }

    @Test func plotAndReplayReadA16MiBCraftedRecordingInLinearTime() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/wide.jsonl"
        try Self.crafted(tail: nil).write(toFile: good, atomically: false, encoding: .utf8)
        let size = (try FileManager.default.attributesOfItem(atPath: good)[.size] as? Int) ?? 0
        #expect(size >= 16 << 20)

        let (plot, plotStatus, plotWall, plotCPU) = try Self.timed(["plot", good, "-o", dir + "/wide.svg"])
        print("plot of a \(size >> 20) MiB crafted recording: \(String(format: "%.2f", plotCPU)) s of CPU, \(String(format: "%.2f", plotWall)) s of wall time (bound \(Self.bound) s)")
        #expect(plotStatus == 0, "\(plot.stderr)")
        #expect(plotCPU < Self.bound)

        // The same file with a bad last line: replay reads every line before it refuses it.
        let bad = dir + "/wide-bad.jsonl"
        let text = Self.crafted(tail: "}{")
        try text.write(toFile: bad, atomically: false, encoding: .utf8)
        let last = text.split(separator: "\n").count
        let (replay, replayStatus, replayWall, replayCPU) = try Self.timed(["control", "--plain", "--quiet", "--peer", "127.0.0.1:9", "--input", "replay:\(bad)"])
        print("control --input replay: of a \(size >> 20) MiB crafted recording: \(String(format: "%.2f", replayCPU)) s of CPU, \(String(format: "%.2f", replayWall)) s of wall time (bound \(Self.bound) s)")
        #expect(replayStatus == 2, "\(replay.stderr)")
        #expect(Self.stderr(replay).hasPrefix("analog-remote: replay \(bad):\(last): "), "the last line is the one refused: \(replay.stderr)")
        #expect(replayCPU < Self.bound)
    }

    /// Past the 64 MiB cap a file is refused at once with one line, whatever it holds.
    @Test func aRecordingOver64MiBIsRefusedAtOnce() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let big = dir + "/big.jsonl"
        #expect(FileManager.default.createFile(atPath: big, contents: Data(Self.header.utf8 + [0x0A])))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.truncate(atOffset: UInt64(65 << 20))
        try handle.close()
        let (plot, status, wall, cpu) = try Self.timed(["plot", big, "-o", dir + "/big.svg"])
        print("plot of a 65 MiB file: refused after \(String(format: "%.2f", cpu)) s of CPU, \(String(format: "%.2f", wall)) s of wall time")
        #expect(status == 2, "\(plot.stderr)")
        let said = Self.stderr(plot)
        #expect(said.split(separator: "\n").count == 1 && said.contains("larger than 64 MiB"), "\(plot.stderr)")
        #expect(cpu < Self.bound)
    }
}
