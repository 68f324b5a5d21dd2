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

/// A whole lesson's recording drawn at the picture's resolution: a small file that shows what
/// every point would (every stop, every full lock, every held span).
@Suite struct LongPlotTests {
    /// A lively drive of `minutes` from scripts/lively-recording.py (the same for the same seed).
    static func lesson(minutes: Int) async throws -> Recording {
        let script = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                      ["python3", Paths.repositoryFile("scripts/lively-recording.py").path, "--minutes", "\(minutes)"])
        let status = await script.exited(timeout: .seconds(120))
        #expect(status == 0, "\(script.stderr)")
        return try Recording.decode(Array(script.stdout.utf8))
    }

    /// Every `<polyline>`'s points, in the order drawn.
    static func polylines(_ svg: String) -> [[(x: Double, y: Double)]] {
        svg.split(separator: "\n").filter { $0.hasPrefix("<polyline") }.map { line in
            let points = line.split(separator: "points=\"")[1].split(separator: "\"")[0]
            return points.split(separator: " ").map { pair in
                let xy = pair.split(separator: ",")
                return (Double(xy[0])!, Double(xy[1])!)
            }
        }
    }

    /// Per pixel column (x rounded down), the lowest and the highest y a line reaches there.
    static func extremes(_ line: [(x: Double, y: Double)]) -> [Int: ClosedRange<Double>] {
        var columns: [Int: ClosedRange<Double>] = [:]
        for p in line {
            let c = Int(p.x.rounded(.down))
            let r = columns[c] ?? p.y...p.y
            columns[c] = min(r.lowerBound, p.y)...max(r.upperBound, p.y)
        }
        return columns
    }

    /// What is shaded, as the set of pixels a `<rect>` of `fill` touches (x to x + width, open).
    static func shaded(_ svg: String, fill: String) -> Set<Int> {
        var pixels: Set<Int> = []
        for line in svg.split(separator: "\n") where line.hasPrefix("<rect") && line.contains("fill=\"\(fill)\"") {
            func attribute(_ name: String) -> Double { Double(line.split(separator: "\(name)=\"")[1].split(separator: "\"")[0])! }
            let x = attribute("x"), w = attribute("width")
            pixels.formUnion(Int(x.rounded(.down))..<Int((x + w - 1e-6).rounded(.up)))
        }
        return pixels
    }

    @Test func aLessonIsDrawnSmallWithEveryExtremeOfTheFullPicture() async throws {
        let recording = try await Self.lesson(minutes: 15)
        #expect(recording.entries.count > 45_000)
        let model = PlotModel(recording)
        let small = PlotSVG.render(model, title: "lesson"), full = PlotSVG.render(model, title: "lesson", atPixels: false)
        #expect(small.utf8.count <= 2 << 20, "\(small.utf8.count) bytes")
        #expect(small.utf8.count * 5 < full.utf8.count, "\(small.utf8.count) vs \(full.utf8.count) bytes")

        // Every line (tilt, the wheels, round trip, loss, sensors) reaches the same extremes in
        // every pixel column: each stop and full lock of the full picture is in the small one.
        let smallLines = Self.polylines(small), fullLines = Self.polylines(full)
        #expect(smallLines.count == fullLines.count && smallLines.count >= 8)
        for (s, f) in zip(smallLines, fullLines) {
            #expect(s.count <= f.count)
            #expect(Self.extremes(s) == Self.extremes(f))
        }
        // The wheels stop and reach full speed both ways in this lesson.
        let wheelYs = Set(fullLines[1].map(\.y))
        #expect(wheelYs.count >= 3)

        // The same spans are shaded (the robot not driving, a button held, the switch pressed).
        for fill in [PlotSVG.heldColour, PlotSVG.bandColour, PlotSVG.switchColour] {
            #expect(!Self.shaded(full, fill: fill).isEmpty)
            #expect(Self.shaded(small, fill: fill) == Self.shaded(full, fill: fill), "\(fill)")
        }
        // Every failsafe and teacher's stop has its mark (several in one pixel column: one
        // line, its label counting the others).
        let marks = model.events.filter { $0.kind == .failsafe || $0.kind == .teacher }.count
        #expect(marks > 3)
        let counted = small.split(separator: "\n").filter { $0.hasPrefix("<text") && $0.contains(" @ ") && ($0.contains("failsafe (") || $0.contains("teacher stop")) }
            .map { line -> Int in
                guard let more = line.split(separator: "(+").dropFirst().first else { return 1 }
                return 1 + Int(more.split(separator: " ")[0])!
            }
            .reduce(0, +)
        #expect(counted == marks)
    }

    @Test func aColumnKeepsItsEntryItsExtremesAndItsExitInOrder() {
        let points: [(Double, Double)] = [(0.1, 5), (0.2, 9), (0.3, 1), (0.4, 4), (0.9, 3), (1.0, 3), (1.5, 8), (2.2, 0)]
        let kept = PixelColumns.decimate(points)
        #expect(kept.map(\.0) == [0.1, 0.2, 0.3, 0.9, 1.0, 1.5, 2.2])
        #expect(PixelColumns.merge([(start: 5, end: 6), (start: 0, end: 1), (start: 1.6, end: 2), (start: 6.4, end: 7)]).map { [$0.start, $0.end] }
                == [[0, 1], [1.6, 2], [5, 7]])
    }
}
