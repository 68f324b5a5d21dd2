import DrivePlot
import DriveRecord
import Foundation
import Receiver
import RemoteWire
import TestSupport
import Testing

/// `analog-remote plot`'s picture: what it shows of the golden recordings.
@Suite struct PlotTests {
    static func recording(_ name: String) throws -> Recording {
        try Recording.decode(Array(try Data(contentsOf: Paths.repositoryFile("vectors/recordings/\(name)"))))
    }

    @Test func wheelSpeedsComeFromTheReceiversMappingAndStopAtAFailsafe() throws {
        let model = PlotModel(try Self.recording("black-box.jsonl"), mapping: .kit)
        let forward = Mapping.kit.wheelSpeeds(for: .init(angle: 0, buttons: .forward))
        #expect(model.left.map(\.value) == [Double(forward.left), 0])
        #expect(model.right.map(\.value) == [Double(forward.right), 0])
        #expect(model.events.map(\.label) == ["owner Ann", "failsafe (silence)", "written: failsafe"])
        #expect(model.held.count == 1 && model.held[0].start == 62.45)
        #expect(model.events[1].t == 62.45 && model.events[1].kind == .failsafe)
        #expect(model.buttons.map(\.name) == ["forward"])
    }

    @Test func theDrivePictureHasItsPanelsUnitsLegendAndMarks() throws {
        let svg = PlotSVG.render(PlotModel(try Self.recording("drive.jsonl")), title: "drive.jsonl")
        #expect(svg.hasPrefix("<?xml") && svg.hasSuffix("</svg>\n"))
        for text in ["tilt (degrees, + = right)", "buttons held", "wheel speeds the mapping makes", "round-trip time (ms, left)",
                     "time since the recording started (s)", "legend", "left wheel", "right wheel", ">forward<", ">backward<", ">a<",
                     "end: finished @ 4.01 s"] {
            #expect(svg.contains(text), "\(text)")
        }
        // The robot's failsafe at start-up is the normal wait for rest, not an event worth a mark.
        #expect(!svg.contains("failsafe (startup)"))
    }

    @Test func aTeacherStopReportIsMarkedWithItsTime() throws {
        var r = try Self.recording("drive.jsonl")
        r.entries.insert(RecordEntry(micros: 3_200_000, event: .robot(state: "teacher-stop", detail: "")), at: 9)
        let model = PlotModel(r)
        #expect(model.events.contains(PlotModel.Event(t: 3.2, kind: .teacher, label: "teacher stop")))
        #expect(PlotSVG.render(model, title: "x").contains("teacher stop @ 3.2 s"))
    }
}
