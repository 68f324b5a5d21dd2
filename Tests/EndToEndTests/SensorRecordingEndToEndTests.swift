import Foundation
import SystemIO
import TestSupport
import Testing

/// The robot's readings are kept: `control --record` and the receiver's black box both get a
/// `sensors` entry for each reading board-sim's sensors (set by the test) go through.
@Suite(.serialized) struct SensorRecordingEndToEndTests {
    @Test func theRecordingAndTheBlackBoxKeepTheReadings() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-sensor-rec-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/box", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func set(_ text: String) throws {
            try text.write(toFile: dir + "/sensors.new", atomically: false, encoding: .utf8)
            guard rename(dir + "/sensors.new", dir + "/sensors") == 0 else { throw ClassroomTestError("rename") }
        }
        try set("sensor1=50 sensor4=7 switch=0 temperature=19 humidity=33\n")
        let sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--firmware", "stock", "--sensors", dir + "/sensors",
                                                  "--link", dir + "/board"])
        defer { sim.stop() }
        #expect(sim.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:\(dir)/board",
                                                       "--state-dir", dir + "/state", "--black-box", dir + "/box"])
        defer { receiver.stop() }
        let port = try ClassroomReceiver.port(of: receiver, what: "receiver")
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--log-format", "json", "--input", "stdin",
                                                      "--peer", "127.0.0.1:\(port)", "--record", dir + "/drive.jsonl"], stdin: true)
        defer { control.stop() }
        let first = #""sensor1":50,"sensor2":0,"sensor3":0,"sensor4":7,"switch":0,"temperature":19,"humidity":33"#
        let second = #""sensor1":200,"sensor2":0,"sensor3":0,"sensor4":7,"switch":1,"temperature":-3,"humidity":33"#
        func recorded() -> String { (try? String(contentsOfFile: dir + "/drive.jsonl", encoding: .utf8)) ?? "" }
        #expect(control.waitForOutput(timeout: .seconds(20)) { _, _ in recorded().contains(first) }, "\(recorded())")
        try set("sensor1=200 sensor4=7 switch=1 temperature=-3 humidity=33\n")
        #expect(control.waitForOutput(timeout: .seconds(10)) { _, _ in recorded().contains(second) }, "\(recorded())")
        control.closeStdin()
        #expect(control.wait(timeout: .seconds(10)) == 0)
        // The receiver's black box, written on SIGUSR1.
        receiver.signal(SIGUSR1)
        func box() -> String {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/box")) ?? [])
                .compactMap { try? String(contentsOfFile: dir + "/box/" + $0, encoding: .utf8) }.joined()
        }
        #expect(receiver.waitForOutput(timeout: .seconds(10)) { _, _ in box().contains(second) }, "\(box())")
        let lines = box().split(separator: "\n").filter { $0.contains(#""e":"sensors""#) }
        #expect(lines.contains { $0.contains(first) } && lines.contains { $0.contains(second) }, "\(lines)")
    }
}
