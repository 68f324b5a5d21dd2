import Controller
import DriveRecord
import Foundation
import Logging
import RemoteWire
import Testing

@Suite struct DriveRecorderTests {
    /// The send loop stamps a state when it goes out, then serves the companions with the
    /// wake-up's earlier `now`: the file must still read back (times never decrease, §10).
    @Test func anEntryStampedBeforeThePreviousOneStillReadsBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("drive-recorder-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("r.jsonl").path
        let origin = ContinuousClock.now
        let recorder = try DriveRecorder(path: path, header: DriveRecorder.header(input: "stdin", receiver: "r", session: "", rate: 50),
                                         session: nil, logger: Logger(label: "test"), now: origin)
        recorder.sent(ControllerState(angle: 0.3, buttons: .forward), at: origin + .microseconds(4121))
        recorder.end(.endOfInput, at: origin + .microseconds(4095))
        let recording = try Recording.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(recording.entries.map(\.micros) == [4121, 4121])
    }
}
