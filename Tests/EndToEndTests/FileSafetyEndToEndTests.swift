#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Every writer of the built binary, given links planted by someone else and directories it must
/// not trust: it refuses (one line, exit 2) or writes only inside its directory, and nothing
/// outside the directory changes. "Another user" is uid 4242 (the test chowns, as root).
@Suite struct FileSafetyEndToEndTests {
    static let isRoot = geteuid() == 0
    static let stranger: uid_t = 4242

    /// A scratch area: `outside/` holds what must never change; hostile directories beside it.
    final class Area {
        let base = NSTemporaryDirectory() + "analog-remote-files-\(UUID().uuidString)"
        var outside: String { base + "/outside" }
        var precious: String { outside + "/precious.txt" }
        static let preciousText = "do not touch\n"

        init() throws {
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try Self.preciousText.write(toFile: precious, atomically: false, encoding: .utf8)
        }
        deinit { try? FileManager.default.removeItem(atPath: base) }

        /// A directory of ours (0755).
        func mine(_ name: String) throws -> String {
            let p = base + "/" + name
            try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: false)
            chmod(p, 0o755)
            return p
        }

        /// A directory of another user that anybody may write (0777, uid 4242).
        func theirs(_ name: String) throws -> String {
            let p = base + "/" + name
            try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: false)
            chmod(p, 0o777)
            chown(p, FileSafetyEndToEndTests.stranger, FileSafetyEndToEndTests.stranger)
            return p
        }

        func link(_ at: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: at, withDestinationPath: target)
        }

        func files(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

        /// `outside/` holds the precious file, as it was, and nothing else.
        var outsideUntouched: Bool {
            files(outside) == ["precious.txt"] && (try? String(contentsOfFile: precious, encoding: .utf8)) == Self.preciousText
        }
    }

    static func oneLine(_ p: ChildProcess, _ containing: String) -> Bool {
        let lines = p.stderr.split(separator: "\n")
        return lines.count == 1 && lines[0].contains(containing)
    }

    // MARK: control --record

    @Test func aRecordingNeverFollowsALinkPlantedAtItsName() throws {
        let a = try Area()
        let dir = try a.mine("rec")
        try a.link(dir + "/drive.jsonl", to: a.precious)
        let p = try ChildProcess(analogRemote: ["control", "--plain", "--quiet", "--peer", "127.0.0.1:9", "--input", "stdin", "--record", dir + "/drive.jsonl"])
        #expect(p.wait(timeout: .seconds(20)) == 2, "\(p.stderr)")
        #expect(Self.oneLine(p, "drive.jsonl is a symbolic link"), "\(p.stderr)")
        #expect(a.outsideUntouched)
    }

    @Test(.enabled(if: isRoot, "chown needs root"))
    func aRecordingInAnotherUsersDirectoryIsRefused() throws {
        let a = try Area()
        let dir = try a.theirs("rec")
        let p = try ChildProcess(analogRemote: ["control", "--plain", "--quiet", "--peer", "127.0.0.1:9", "--input", "stdin", "--record", dir + "/drive.jsonl"])
        #expect(p.wait(timeout: .seconds(20)) == 2, "\(p.stderr)")
        #expect(Self.oneLine(p, "belongs to another user (uid 4242)"), "\(p.stderr)")
        #expect(a.files(dir).isEmpty)
    }

    // MARK: receive --black-box

    /// A black box directory of another user, and one that is a link to elsewhere: the receiver
    /// says so and drives without a black box; nothing is written there, not even on exit.
    @Test(.enabled(if: isRoot, "chown needs root"), arguments: ["theirs", "link"])
    func aBlackBoxNeverWritesIntoAHostileDirectory(kind: String) throws {
        let a = try Area()
        let box: String
        if kind == "theirs" {
            box = try a.theirs("box")
        } else {
            box = a.base + "/box"
            try a.link(box, to: a.outside)
        }
        // Exit writes a black box when there is one (a receiver without one is not sent SIGUSR1:
        // nothing catches it there).
        let r = try ClassroomReceiver(["--black-box", box])
        _ = try r.stop()
        #expect(r.process.stderr.contains(kind == "theirs" ? "belongs to another user" : "is a symbolic link"), "\(r.process.stderr)")
        #expect(a.outsideUntouched)
        if kind == "theirs" { #expect(a.files(box).isEmpty, "\(a.files(box))") }
    }

    // MARK: web

    static func web(_ extra: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(analogRemote: ["web", "--peer", "127.0.0.1:9", "--port", "0", "--no-qr", "--host", "127.0.0.1"] + extra,
                         environment: environment)
    }

    @Test(.enabled(if: isRoot, "chown needs root"))
    func phoneRecordingsRefuseAnotherUsersDirectory() throws {
        let a = try Area()
        let dir = try a.theirs("phones")
        let p = try Self.web(["--plain-http", "--record-dir", dir])
        #expect(p.wait(timeout: .seconds(20)) == 2, "\(p.stdout) \(p.stderr)")
        #expect(Self.oneLine(p, "--record-dir \(dir) belongs to another user (uid 4242)"), "\(p.stderr)")
        #expect(a.files(dir).isEmpty)
    }

    @Test(.enabled(if: isRoot, "chown needs root"))
    func theLessonLogRefusesAWorldWritableDirectory() throws {
        let a = try Area()
        let keys = try a.mine("keys")
        let key = keys + "/teacher.key"
        let g = try ChildProcess(analogRemote: ["keygen", "--output", key])
        #expect(g.wait() == 0, "\(g.stderr)")
        let logs = try a.mine("logs")
        chmod(logs, 0o777)
        let p = try Self.web(["--plain-http", "--teacher-key-file", key, "--log-dir", logs])
        #expect(p.wait(timeout: .seconds(20)) == 2, "\(p.stdout) \(p.stderr)")
        #expect(Self.oneLine(p, "may be written by other users (mode 0777): run chmod go-w \(logs)"), "\(p.stderr)")
        #expect(a.files(logs).isEmpty)
    }

    /// The self-signed certificate's files are links planted to elsewhere: the server replaces
    /// the links with its own files; nothing appears where they pointed.
    @Test func theCertificateNeverFollowsPlantedLinks() throws {
        let a = try Area()
        let state = try a.mine("state")
        let dir = state + "/analog-remote"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try a.link(dir + "/web-key.pem", to: a.outside + "/stolen-key.pem")
        try a.link(dir + "/web-cert.pem", to: a.outside + "/cert.pem")
        let p = try Self.web([], environment: ["XDG_STATE_HOME": state])
        #expect(p.waitForOutput(timeout: .seconds(30)) { out, _ in out.contains("serving") }, "\(p.stdout) \(p.stderr)")
        p.stop()
        #expect(a.outsideUntouched, "\(a.files(a.outside))")
        var info = stat()
        #expect(lstat(dir + "/web-key.pem", &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o600)
    }

    // MARK: keygen, plot

    @Test(.enabled(if: isRoot, "chown needs root"))
    func keygenRefusesAnotherUsersDirectory() throws {
        let a = try Area()
        let dir = try a.theirs("keys")
        let p = try ChildProcess(analogRemote: ["keygen", "--output", dir + "/teacher.key"])
        #expect(p.wait() == 2, "\(p.stderr)")
        #expect(Self.oneLine(p, "belongs to another user (uid 4242)"), "\(p.stderr)")
        #expect(a.files(dir).isEmpty)
    }

    /// `plot -o OUT.png` had the converter write OUT itself, through a link planted there. Now
    /// the converter works in a private directory and OUT is replaced, never followed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rsvg-convert"), "needs rsvg-convert"))
    func plotNeverWritesThroughAPlantedLink() throws {
        let a = try Area()
        let dir = try a.mine("plots")
        let recording = dir + "/r.jsonl"
        try ([#"{"format":"analog-remote-recording","version":1,"kind":"drive","start_unix_ms":0,"input":"script:x"}"#,
              #"{"t":0,"e":"state","angle":0.1,"buttons":1}"#, #"{"t":1,"e":"state","angle":0.0,"buttons":0}"#]
             .joined(separator: "\n") + "\n").write(toFile: recording, atomically: true, encoding: .utf8)
        try a.link(dir + "/out.png", to: a.precious)
        try a.link(dir + "/out.svg", to: a.precious)
        let png = try ChildProcess(analogRemote: ["plot", recording, "-o", dir + "/out.png"])
        #expect(png.wait(timeout: .seconds(60)) == 0, "\(png.stderr)")
        let svg = try ChildProcess(analogRemote: ["plot", recording, "-o", dir + "/out.svg"])
        #expect(svg.wait(timeout: .seconds(60)) == 0, "\(svg.stderr)")
        #expect(a.outsideUntouched)
        #expect(a.files(dir) == ["out.png", "out.svg", "r.jsonl"])
        var info = stat()
        #expect(lstat(dir + "/out.png", &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
    }
}
