import DriveRecord
import Foundation
import TestSupport
import Testing

/// The golden recordings in vectors/recordings/ are the format's contract (Protocol.md §10):
/// they read as shown there, and what is read writes back byte for byte.
@Suite struct RecordingGoldenTests {
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Paths.repositoryFile("vectors/recordings/\(name)")))
    }

    @Test func theDriveExampleReadsAsDocumentedAndWritesBackTheSameBytes() throws {
        let bytes = try Self.bytes("drive.jsonl")
        let recording = try Recording.decode(bytes)
        #expect(recording.header == RecordHeader(kind: .drive, startUnixMillis: 1_795_624_800_123,
                                                 input: "script:config-examples/drive-square.script", receiver: "127.0.0.1:27183",
                                                 session: "", rate: 50))
        #expect(recording.truncatedLine == nil)
        #expect(recording.entries.count == 14)
        #expect(recording.entries[0] == RecordEntry(micros: 412, event: .state(angle: 0, buttons: 0)))
        #expect(recording.entries[2] == RecordEntry(micros: 31_000, event: .robot(state: "failsafe", detail: "startup")))
        #expect(recording.entries[5] == RecordEntry(micros: 1_000_107, event: .link(roundTripMillis: 0.412, loss: 0)))
        #expect(recording.entries[6] == RecordEntry(micros: 2_000_295, event: .state(angle: 0.7854, buttons: 1)))
        #expect(recording.entries[9] == RecordEntry(micros: 3_500_000, event: .state(angle: -0.4, buttons: 2)))
        #expect(recording.entries.last == RecordEntry(micros: 4_011_000, event: .end(reason: "finished")))
        #expect(Array(recording.encode().utf8) == bytes)
    }

    @Test func theBlackBoxExampleReadsAsDocumentedAndWritesBackTheSameBytes() throws {
        let bytes = try Self.bytes("black-box.jsonl")
        let recording = try Recording.decode(bytes)
        #expect(recording.header.kind == .blackBox)
        #expect(recording.header.rate == nil)
        #expect(recording.entries.map(\.event) == [
            .owner("Ann"), .state(angle: 0, buttons: 1),
            .board([.init(address: 15, value: 128), .init(address: 16, value: 128), .init(address: 34, value: 192), .init(address: 35, value: 64)]),
            .failsafe(cause: "silence"),
            .board([.init(address: 15, value: 0), .init(address: 16, value: 0), .init(address: 34, value: 0), .init(address: 35, value: 0)]),
            .mark("failsafe"),
        ])
        #expect(Array(recording.encode().utf8) == bytes)
    }

    /// The stream reader and the whole-file reader agree, line by line.
    @Test func readingLineByLineGivesTheSameEntries() throws {
        let bytes = try Self.bytes("drive.jsonl")
        var reader = RecordReader()
        var entries: [RecordEntry] = []
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            if let e = try reader.read(line) { entries.append(e) }
        }
        #expect(entries == (try Recording.decode(bytes)).entries)
        #expect(reader.header?.input == "script:config-examples/drive-square.script")
    }

    /// Every event kind, with awkward text, survives write → read.
    @Test func everyEventSurvivesWriteThenRead() throws {
        let events: [RecordEvent] = [
            .state(angle: RecordLine.maximumAngle, buttons: 0x7FFF), .state(angle: -RecordLine.maximumAngle, buttons: 0),
            .state(angle: 1e-7, buttons: 3), .robot(state: "owned", detail: "Ann \"the driver\" \u{1}\n😀"),
            .link(roundTripMillis: nil, loss: nil), .link(roundTripMillis: 12.5, loss: 0.25), .owner(nil), .owner("10.0.0.2:5000"),
            .failsafe(cause: "board-link"), .resumed, .teacher(stopped: true), .teacher(stopped: false), .board([]),
            .boardLink(up: false, text: "/dev/ttyACM0: hung up"), .mark("SIGUSR1"), .end(reason: "signal 2"),
        ]
        let recording = Recording(header: RecordHeader(kind: .blackBox, startUnixMillis: 0, input: "receive"),
                                  entries: events.enumerated().map { RecordEntry(micros: Int64($0.offset) * 1_000_001, event: $0.element) })
        let again = try Recording.decode(Array(recording.encode().utf8))
        #expect(again == recording)
    }

    @Test func theHeaderStartIsUTC() {
        #expect(RecordTime.iso8601(unixMillis: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RecordTime.iso8601(unixMillis: 951_782_400_007) == "2000-02-29T00:00:00.007Z")
        #expect(RecordTime.iso8601(unixMillis: 1_795_624_800_123) == "2026-11-25T16:40:00.123Z")
    }
}
