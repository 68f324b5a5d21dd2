import Foundation
import SystemIO
import TestSupport
import Testing

/// The robot's senses, end to end through the built binaries: board-sim's sensors set by the
/// test (its --sensors file) → `receive` reads them (`R 07 0b`, 10 Hz) → robot-sensors reports
/// → `control --log-format json` writes a `sensors` object. Each change must be in the log
/// within 300 ms (the issue's bound; measured from just before the file is replaced to the log
/// line's own time stamp, both wall clock, and printed); an unchanged board adds no line at the
/// default level.
@Suite(.serialized) struct SensorsEndToEndTests {
    struct Rig {
        let dir: String
        let sim: ChildProcess
        let receiver: ChildProcess
        let control: ChildProcess
        var file: String { dir + "/sensors" }

        init(accept: String, logLevel: String = "info") throws {
            dir = NSTemporaryDirectory() + "analog-remote-sensors-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try "sensor1=10 sensor2=20 sensor3=30 sensor4=40 switch=0 temperature=21 humidity=45\n"
                .write(toFile: dir + "/sensors", atomically: true, encoding: .utf8)
            sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--firmware", "stock", "--sensors", dir + "/sensors",
                                                  "--link", dir + "/board"])
            guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
                throw ClassroomTestError("board-sim did not start: \(sim.stderr)")
            }
            receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--accept", accept,
                                                       "--board", "serial:\(dir)/board", "--state-dir", dir + "/state"])
            let port = try ClassroomReceiver.port(of: receiver, what: "receiver")
            var secret: [String] = []
            if accept == "secret" {
                guard receiver.waitForOutput({ out, _ in out.contains("\nsecret ") }),
                      let line = receiver.stdout.split(separator: "\n").first(where: { $0.hasPrefix("secret ") }) else {
                    throw ClassroomTestError("no secret printed: \(receiver.stdout)")
                }
                secret = ["--secret", String(line.dropFirst("secret ".count))]
            }
            control = try ChildProcess(analogRemote: ["control", "--quiet", "--log-format", "json", "--log-level", logLevel,
                                                      "--input", "stdin", "--peer", "127.0.0.1:\(port)"] + secret, stdin: true)
        }

        /// Replaces the sensors file in one rename (board-sim never reads half of it).
        func set(_ text: String) throws {
            try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
            guard rename(file + ".new", file) == 0 else { throw ClassroomTestError("rename \(file)") }
        }

        /// `(time, sensors)` of every `sensors` record in control's log so far.
        var records: [(time: Double, sensors: [String: Int])] {
            control.stderr.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("{"), let data = line.data(using: .utf8),
                      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                      let sensors = object["sensors"] as? [String: Any], let time = object["time"] as? Double else { return nil }
                return (time, sensors.compactMapValues { $0 as? Int })
            }
        }

        func stop() {
            control.closeStdin()
            _ = control.wait(timeout: .seconds(10))
            receiver.stop()
            sim.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    @Test(arguments: ["first", "secret"])
    func aChangeOnTheBoardIsInTheDriversLogWithin300ms(accept: String) throws {
        let rig = try Rig(accept: accept)
        defer { rig.stop() }
        let first = ["sensor1": 10, "sensor2": 20, "sensor3": 30, "sensor4": 40, "switch": 0, "temperature": 21, "humidity": 45]
        #expect(rig.control.waitForOutput(timeout: .seconds(20)) { _, _ in rig.records.contains { $0.sensors == first } },
                "control never logged the first reading: \(rig.control.stderr.suffix(1500)) / receiver: \(rig.receiver.stderr.suffix(800))")

        let changes: [[String: Int]] = [
            ["sensor1": 200, "sensor2": 20, "sensor3": 30, "sensor4": 40, "switch": 0, "temperature": 21, "humidity": 45],
            ["sensor1": 200, "sensor2": 20, "sensor3": 30, "sensor4": 40, "switch": 1, "temperature": 21, "humidity": 45],
            ["sensor1": 200, "sensor2": 0, "sensor3": 255, "sensor4": 1, "switch": 1, "temperature": -7, "humidity": 80],
            ["sensor1": 0, "sensor2": 0, "sensor3": 0, "sensor4": 0, "switch": 0, "temperature": 0, "humidity": 0],
        ]
        var latencies: [Double] = []
        var lastChange = 0.0
        for change in changes {
            let text = change.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let before = Date().timeIntervalSince1970
            lastChange = before
            try rig.set(text + "\n")
            var seen: Double?
            _ = rig.control.waitForOutput(timeout: .seconds(5)) { _, _ in
                seen = rig.records.first { $0.sensors == change && $0.time >= before - 0.002 }?.time
                return seen != nil
            }
            guard let seen else {
                Issue.record("\(accept): \(text) never reached control's log: \(rig.control.stderr.suffix(1000))")
                return
            }
            latencies.append(max(0, seen - before))
            usleep(150_000)   // let a repeat of the old value pass: every change starts from a steady board
        }
        print("sensors \(accept): change → control's JSON log, ms: \(latencies.map { Int(($0 * 1000).rounded()) })")
        for latency in latencies { #expect(latency <= 0.3, "a change took \(Int(latency * 1000)) ms to reach the log") }
        // The receiver repeats an unchanged reading at least once a second; at the default level
        // the driver's log holds the change alone: one line in 5 s of an unchanged board.
        usleep(5_000_000)
        let lines = rig.records.filter { $0.time >= lastChange - 0.002 }
        #expect(lines.count == 1, "sensor lines in 5 s of an unchanged board: \(lines.map(\.sensors))")
    }

    /// At `--log-level debug` the receiver's repeats are in the log too, at least once a second.
    @Test func aDebugLogHoldsTheRepeatsOfAnUnchangedReading() throws {
        let rig = try Rig(accept: "first", logLevel: "debug")
        defer { rig.stop() }
        let first = ["sensor1": 10, "sensor2": 20, "sensor3": 30, "sensor4": 40, "switch": 0, "temperature": 21, "humidity": 45]
        #expect(rig.control.waitForOutput(timeout: .seconds(20)) { _, _ in rig.records.contains { $0.sensors == first } },
                "control never logged the first reading: \(rig.control.stderr.suffix(1500))")
        let start = Date().timeIntervalSince1970
        usleep(2_200_000)
        let repeats = rig.records.filter { $0.sensors == first && $0.time > start }.map(\.time)
        #expect(repeats.count >= 2, "repeats of an unchanged reading: \(repeats)")
        for (a, b) in zip(repeats, repeats.dropFirst()) { #expect(b - a <= 1.0, "a gap of \(b - a) s between sensor lines") }
    }
}
