import DrivePlot
import DriveRecord
import Foundation
import TestSupport
import Testing

/// The robot's sensor readings in a recording (`sensors` entries) and in `plot`'s picture.
@Suite struct SensorRecordingTests {
    static let reading = SensorValues(sensors: [12, 34, 0, 255], switchValue: 1, temperature: -2, humidity: 40)

    @Test func aSensorsEntryIsOneLineAndReadsBack() throws {
        let entry = RecordEntry(micros: 1_500_000, event: .sensors(Self.reading))
        let line = RecordLine.encode(entry)
        #expect(line == #"{"t":1.5,"e":"sensors","sensor1":12,"sensor2":34,"sensor3":0,"sensor4":255,"switch":1,"temperature":-2,"humidity":40}"#)
        let header = try String(contentsOf: Paths.repositoryFile("vectors/recordings/drive.jsonl"), encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        let recording = try Recording.decode(Array((header + "\n" + line + "\n").utf8))
        #expect(recording.entries == [entry])
    }

    @Test(arguments: [#""sensor1":256"#, #""sensor1":-1"#, #""temperature":128"#, #""temperature":1.5"#, #""switch":"on""#])
    func aSensorsEntryOutOfRangeIsRefused(bad: String) throws {
        let good = #""sensor1":12,"sensor2":34,"sensor3":0,"sensor4":255,"switch":1,"temperature":-2,"humidity":40"#
        let key = String(bad.split(separator: ":")[0])
        let fields = good.split(separator: ",").map { $0.hasPrefix(key + ":") ? bad : String($0) }.joined(separator: ",")
        let header = try String(contentsOf: Paths.repositoryFile("vectors/recordings/drive.jsonl"), encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        #expect(throws: RecordProblem.self) {
            try Recording.decode(Array((header + "\n" + #"{"t":1,"e":"sensors","# + fields + "}\n").utf8))
        }
    }

    @Test func plotDrawsASensorPanelOnlyWhenTheRecordingHasReadings() throws {
        var r = try Recording.decode(Array(try Data(contentsOf: Paths.repositoryFile("vectors/recordings/drive.jsonl"))))
        let without = PlotSVG.render(PlotModel(r), title: "drive")
        #expect(!without.contains("the robot's sensors"))
        var released = Self.reading
        released.switchValue = 0
        released.sensors[0] = 200
        r.entries.insert(RecordEntry(micros: 1_000_000, event: .sensors(Self.reading)), at: 1)
        r.entries.insert(RecordEntry(micros: 2_000_000, event: .sensors(released)), at: 2)
        r.entries.sort { $0.micros < $1.micros }
        let model = PlotModel(r)
        #expect(model.sensors[0].map(\.value) == [12, 200])
        #expect(model.sensors[3].map(\.value) == [255])
        #expect(model.switchPressed.count == 1 && model.switchPressed[0].start == 1 && model.switchPressed[0].end == 2)
        let svg = PlotSVG.render(model, title: "drive")
        for text in ["the robot's sensors 1–4 (raw 0–255); switch pressed shaded", ">sensor 1<", ">sensor 4<", ">switch pressed<"] {
            #expect(svg.contains(text), "\(text)")
        }
    }
}
