import Foundation
import TestSupport
import Testing

/// `board-sim --sensors FILE` with a file that is missing, then garbage, then good (as
/// `board-sim --help` promises): a missing file reads as nothing plugged in; a file that does
/// not parse gives one line on stderr per version of the file, naming the file and the word,
/// and changes nothing; the simulator never stops or crashes over it and exits 0 at SIGTERM.
@Suite struct BoardSimSensorsFileTests {
    @Test func aBadSensorsFileIsOneLineAndChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path + "/sensors"
        func setSensors(_ text: String) throws {
            try text.write(toFile: file + ".tmp", atomically: false, encoding: .utf8)
            guard rename(file + ".tmp", file) == 0 else { throw TestFailure("rename failed") }
        }
        // No file yet: it runs, every sensor 0 (the map's 0x0b…0x0e).
        let sim = try BoardSimProcess(["--firmware", "stock", "--sensors", file])
        #expect(sim.child.isRunning && sim.child.stderr.isEmpty, "\(sim.child.stderr)")
        let ignored = { sim.child.stderr.split(separator: "\n").filter { $0.hasPrefix("board-sim: sensors file ignored: ") } }

        let bad = [
            ("sensor1=999 switch=1\n", "sensor1=999"),   // out of range
            ("sensor1=12 light=3\n", "light=3"),         // a key it does not know
            ("sensor1=abc\n", "sensor1=abc"),            // not a number
            ("humidity\n", "humidity"),                  // no value
            (String(repeating: "=", count: 5000), "="),  // garbage
        ]
        for (n, (text, word)) in bad.enumerated() {
            try setSensors(text)
            #expect(eventually(timeout: .seconds(5)) { ignored().count == n + 1 }, "no line for \(text.prefix(40)): \(sim.child.stderr)")
            let line = ignored().last.map(String.init) ?? ""
            #expect(line.contains(file) && line.contains(word), "\(line)")
        }
        // One line per version of the file, not one per look (every 20 ms).
        Thread.sleep(forTimeInterval: 0.2)
        #expect(ignored().count == bad.count, "\(sim.child.stderr)")
        // Nothing of it reached the map: no "sensors" trace line, the switch still up.
        #expect(!sim.trace.contains { $0.hasPrefix("sensors ") }, "\(sim.trace.suffix(3))")
        #expect(sim.child.isRunning)

        // A good file is taken (its trace line), after all that.
        try setSensors("sensor1=12 switch=1\n")
        #expect(eventually(timeout: .seconds(5)) { sim.trace.contains { $0.hasPrefix("sensors ") && $0.contains("sensor1=12") && $0.contains("switch=1") } },
                "\(sim.trace.suffix(3)) \(sim.child.stderr)")
        sim.child.signal(SIGTERM)
        #expect(sim.child.wait() == 0, "\(sim.child.stderr)")
        #expect(!sim.child.stderr.contains("Fatal error") && ignored().count == bad.count)
    }
}
