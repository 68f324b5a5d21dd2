#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemIO
import Testing

/// The one way files are written: links planted by someone else are never followed, hostile
/// directories are refused with one line, and nothing outside the directory changes.
@Suite struct SafeDirectoryTests {
    /// A scratch directory (ours, 0755) with an "outside" file a planted link points at.
    final class Scratch {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-safe-\(UUID().uuidString)").path
        var dir: String { base + "/dir" }
        var outside: String { base + "/outside.txt" }
        static let outsideText = "precious\n"

        init() throws {
            try FileManager.default.createDirectory(atPath: base + "/dir", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
            try Self.outsideText.write(toFile: outside, atomically: false, encoding: .utf8)
        }
        deinit { try? FileManager.default.removeItem(atPath: base) }

        func plant(_ name: String) throws {
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/\(name)", withDestinationPath: outside)
        }

        /// The outside file as it was, and nothing else new beside it.
        var outsideUntouched: Bool {
            (try? String(contentsOfFile: outside, encoding: .utf8)) == Self.outsideText
                && (try? FileManager.default.contentsOfDirectory(atPath: base).sorted()) == ["dir", "outside.txt"]
        }

        func mode(_ path: String) -> mode_t {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode : 0
        }
    }

    static let isRoot = geteuid() == 0
    /// A uid nobody on a test machine uses, for a directory "of another user".
    static let strangerUID: uid_t = 4242

    /// `control --record FILE` where FILE is a planted link: refused, the link's target intact.
    @Test func aRecordingNeverFollowsALinkAtItsName() throws {
        let s = try Scratch()
        try s.plant("drive.jsonl")
        #expect(throws: SafeFileError.self) { try LineFile(creating: "\(s.dir)/drive.jsonl") }
        #expect(s.outsideUntouched)
        #expect(s.mode("\(s.dir)/drive.jsonl") & S_IFMT == S_IFLNK, "the link is left alone, not replaced")
    }

    /// A file written whole (black box, plot): a link at the predictable temporary name of the
    /// old writer (`.NAME.PID.tmp`) and one at the final name are both left unfollowed.
    @Test func aWholeFileReplaceNeverFollowsALink() throws {
        let s = try Scratch()
        try s.plant(".box.jsonl.\(getpid()).tmp")
        try s.plant("box.jsonl")
        try LineFile.replace("\(s.dir)/box.jsonl", with: "new\n")
        #expect(s.outsideUntouched)
        #expect(try String(contentsOfFile: "\(s.dir)/box.jsonl", encoding: .utf8) == "new\n")
        #expect(s.mode("\(s.dir)/box.jsonl") & S_IFMT == S_IFREG, "the link at the name was replaced by the file")
        #expect(s.mode("\(s.dir)/box.jsonl") & 0o777 == 0o600)
        let left = try FileManager.default.contentsOfDirectory(atPath: s.dir).filter { $0.hasSuffix(".tmp") && !$0.contains("\(getpid())") }
        #expect(left.isEmpty, "no temporary left behind: \(left)")
    }

    /// Temporary names differ from call to call and carry no pid: nobody can plant them ahead.
    @Test func temporaryNamesAreUnpredictable() throws {
        let s = try Scratch()
        let dir = try SafeDirectory(s.dir)
        // A directory that refuses renames shows the temporary the writer made: a name given
        // as a directory in the way fails at rename, and the temporary is removed again.
        try FileManager.default.createDirectory(atPath: "\(s.dir)/x", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: "\(s.dir)/x/keep", contents: Data()))
        #expect(throws: SafeFileError.self) { try dir.replace("x", with: [1]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir) == ["x"])
        let names = (0..<50).map { _ in SafeDirectory.temporaryName(for: "box.jsonl") }
        #expect(Set(names).count == 50)
        #expect(names.allSatisfy { $0.hasPrefix(".box.jsonl.") && $0.hasSuffix(".tmp") && !$0.contains(".\(getpid()).") })
    }

    @Test func createUniqueStepsPastAPlantedName() throws {
        let s = try Scratch()
        try s.plant("phone-Ann-1.jsonl")
        let dir = try SafeDirectory(s.dir)
        let (name, file) = try dir.createUnique(stem: "phone-Ann-1", suffix: ".jsonl")
        try file.writeAll(Array("x\n".utf8))
        file.close()
        #expect(name == "phone-Ann-1-2.jsonl")
        #expect(s.outsideUntouched)
        #expect(s.mode("\(s.dir)/\(name)") & 0o777 == 0o600)
    }

    @Test func createOnceKeepsWhatIsThereAndNeverFollowsALink() throws {
        let s = try Scratch()
        let dir = try SafeDirectory(s.dir)
        #expect(try dir.createOnce("key", with: Array("a\n".utf8)))
        #expect(try !dir.createOnce("key", with: Array("b\n".utf8)))
        #expect(try dir.read("key", limit: 100) == Array("a\n".utf8))
        try FileManager.default.createSymbolicLink(atPath: "\(s.dir)/dangling", withDestinationPath: s.base + "/made-outside")
        #expect(try !dir.createOnce("dangling", with: [1]))
        #expect(!FileManager.default.fileExists(atPath: s.base + "/made-outside"))
        #expect(throws: SafeFileError.self) { try dir.read("dangling", limit: 100) }
    }

    /// The directory given is a link: refused with the fix, nothing written where it points.
    @Test func aDirectoryThatIsALinkIsRefused() throws {
        let s = try Scratch()
        try FileManager.default.createSymbolicLink(atPath: s.base + "/link", withDestinationPath: s.dir)
        do {
            _ = try SafeDirectory(s.base + "/link")
            Issue.record("a linked directory was accepted")
        } catch {
            #expect(error.description == "\(s.base)/link is a symbolic link: give the directory itself (readlink -f \(s.base)/link)")
        }
        #expect(throws: SafeFileError.self) { try LineFile(creating: s.base + "/link/drive.jsonl") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir).isEmpty)
    }

    /// Another user's directory, and one anybody may write without the sticky bit: refused,
    /// with the fix; a sticky one (like /tmp) is accepted.
    @Test(.enabled(if: isRoot, "chown needs root"))
    func hostileDirectoriesAreRefused() throws {
        let s = try Scratch()
        let theirs = s.base + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(chown(theirs, Self.strangerUID, Self.strangerUID) == 0)
        do {
            _ = try SafeDirectory(theirs)
            Issue.record("another user's directory was accepted")
        } catch {
            #expect(error.description.contains("belongs to another user (uid 4242)"), "\(error)")
        }
        #expect(throws: SafeFileError.self) { try LineFile(creating: theirs + "/drive.jsonl") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)

        let open = s.base + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        #expect(chmod(open, 0o777) == 0)
        do {
            _ = try SafeDirectory(open)
            Issue.record("a world-writable directory was accepted")
        } catch {
            #expect(error.description == "\(open) may be written by other users (mode 0777): run chmod go-w \(open), or use a directory of your own")
        }
        #expect(chmod(open, 0o1777) == 0)
        _ = try SafeDirectory(open)
    }

    /// Rotation removes the oldest of our own files first, never the one kept, and never a
    /// link or another user's file.
    @Test func rotationRemovesTheOldestOfOursOnly() throws {
        let s = try Scratch()
        let dir = try SafeDirectory(s.dir)
        for (i, name) in ["rec-a.jsonl", "rec-b.jsonl", "rec-c.jsonl"].enumerated() {
            try dir.replace(name, with: [UInt8](repeating: 65, count: 1000))
            var times = [timespec(tv_sec: 1_000_000 + i * 10, tv_nsec: 0), timespec(tv_sec: 1_000_000 + i * 10, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, "\(s.dir)/\(name)", &times, 0) == 0)
        }
        try s.plant("rec-0-link.jsonl")
        if Self.isRoot {
            try dir.replace("rec-00-theirs.jsonl", with: [1])
            #expect(chown("\(s.dir)/rec-00-theirs.jsonl", Self.strangerUID, Self.strangerUID) == 0)
        }
        let removed = dir.rotate(prefix: "rec-", suffix: ".jsonl", maximumBytes: 2000, keeping: ["rec-a.jsonl"])
        #expect(removed == ["rec-b.jsonl"])
        let left = try FileManager.default.contentsOfDirectory(atPath: s.dir).sorted()
        #expect(left == (Self.isRoot ? ["rec-0-link.jsonl", "rec-00-theirs.jsonl", "rec-a.jsonl", "rec-c.jsonl"]
                                      : ["rec-0-link.jsonl", "rec-a.jsonl", "rec-c.jsonl"]))
        #expect(s.outsideUntouched)
    }

    @Test func theQuotaCountsStartsPerKeyPerMinute() {
        var q = RecordingQuota(filesPerMinute: 3, maximumBytes: 1 << 20)
        let t0 = ContinuousClock.now
        var first: [Bool] = []
        for i in 0..<5 { first.append(q.admit("ann", now: t0 + .seconds(i))) }
        #expect(first == [true, true, true, false, false])
        let bob = q.admit("bob", now: t0 + .seconds(5))
        #expect(bob, "another driver has a count of their own")
        let late = q.admit("ann", now: t0 + .seconds(59))
        #expect(!late)
        let later = q.admit("ann", now: t0 + .seconds(61))
        #expect(later, "a minute later the first start no longer counts")
    }
}
