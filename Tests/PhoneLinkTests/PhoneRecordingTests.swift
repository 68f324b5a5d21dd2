import PhoneLink
import Testing

/// `web --record-dir DIR`: one file per driver and drive, named so that a teacher finds it.
@Suite struct PhoneRecordingTests {
    @Test func eachDriveGetsAFileNamedForItsDriverAndStart() {
        let path = PhoneController.recordingPath(in: "/rec", driver: "Ann B./../x")
        #expect(path.hasPrefix("/rec/phone-Ann-B-x-"), "\(path)")
        #expect(path.hasSuffix("Z.jsonl") && !path.dropFirst(5).contains("/") && !path.contains(":"), "\(path)")
        #expect(PhoneController.recordingPath(in: "/rec", driver: String(repeating: "a", count: 100)).count < 90)
    }
}
