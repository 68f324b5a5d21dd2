#if canImport(Glibc)
import Glibc
#endif
import DriveRecord
import Foundation
import Logging
import PhoneLink
import SystemIO
import Testing

/// `web --record-dir DIR`: one file per driver and drive, named so that a teacher finds it,
/// never through a link, within the caps.
@Suite struct PhoneRecordingTests {
    @Test func eachDriveGetsAFileNamedForItsDriverAndStart() {
        let stem = PhoneController.recordingStem(driver: "Ann B./../x")
        #expect(stem.hasPrefix("phone-Ann-B-x-"), "\(stem)")
        #expect(stem.hasSuffix("Z") && !stem.contains("/") && !stem.contains(":"), "\(stem)")
        #expect(PhoneController.recordingStem(driver: String(repeating: "a", count: 100)).count < 80)
    }

    final class Scratch {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-phones-\(UUID().uuidString)").path
        init() throws { try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: base) }
        func files(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }
    }

    /// Links planted at every name the next two seconds of drives could take: each drive still
    /// gets a file of its own in DIR (a `-2` name), and nothing appears where the links point.
    @Test func plantedLinksAreSteppedPastNotFollowed() throws {
        let s = try Scratch()
        let dir = s.base + "/rec"
        let recordings = try PhoneRecordings(path: dir)
        let now = WallClock.unixMillis()
        for ms in now..<(now + 2000) {
            let stamp = RecordTime.iso8601(unixMillis: ms).replacingOccurrences(of: ":", with: "-")
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/phone-Ann-\(stamp).jsonl", withDestinationPath: "\(s.base)/outside/\(ms)")
        }
        let file = try #require(recordings.start(driver: "Ann", logger: Logger(label: "test")))
        try file.append("{}")
        file.close()
        #expect(file.path.hasSuffix("-2.jsonl"), "\(file.path)")
        var info = stat()
        #expect(lstat(file.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o600)
        #expect(s.files(s.base + "/outside").isEmpty)
    }

    /// Past the per-minute cap a drive goes unrecorded; past the bytes the oldest go first.
    @Test func capsRotateTheOldestAndLimitTheRate() throws {
        let s = try Scratch()
        let dir = s.base + "/rec"
        let recordings = try PhoneRecordings(path: dir, quota: RecordingQuota(filesPerMinute: 2, maximumBytes: 2500))
        let logger = Logger(label: "test")
        let t0 = ContinuousClock.now
        var made: [String] = []
        for (i, driver) in ["Ann", "Bob", "Cy", "Di"].enumerated() {
            let file = try #require(recordings.start(driver: driver, logger: logger, now: t0 + .seconds(i)))
            try file.appendRaw(String(repeating: "x", count: 1000))
            file.close()
            var times = [timespec(tv_sec: 1_000_000 + i, tv_nsec: 0), timespec(tv_sec: 1_000_000 + i, tv_nsec: 0)]
            utimensat(AT_FDCWD, file.path, &times, 0)
            made.append(String(file.path.split(separator: "/").last!))
        }
        #expect(s.files(dir) == Array(made.suffix(3)).sorted(), "the oldest went first: \(s.files(dir))")
        #expect(recordings.start(driver: "Ann", logger: logger, now: t0 + .seconds(10)) != nil)
        #expect(recordings.start(driver: "ann", logger: logger, now: t0 + .seconds(11)) == nil, "a third drive within the minute is not recorded")
        #expect(recordings.start(driver: "Ann", logger: logger, now: t0 + .seconds(70)) != nil)
    }
}
