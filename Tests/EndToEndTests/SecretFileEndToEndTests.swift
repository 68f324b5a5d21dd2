import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Secrets as files (docs/security.md, Protocol.md §8.6) through the built binary: `keygen`
/// writes a key only its owner may read; receivers and stop-all take it from a file; a key file
/// or a config holding a secret that others may read is refused (one line, exit 2); the argv
/// forms warn; the secret words never reach a log line.
@Suite(.serialized) struct SecretFileEndToEndTests {
    static func temporary(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ar-secret-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    static func write(_ text: String, to path: String, mode: Int) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func mode(of path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func keygenWritesAPrivateKeyThatReceiversAndStopAllShare() throws {
        let key = Self.temporary("teacher.key")
        let keygen = try ChildProcess(analogRemote: ["keygen", "--output", key])
        #expect(keygen.wait() == 0, "\(keygen.stderr)")
        #expect(try Self.mode(of: key) == 0o600)
        let text = try String(contentsOfFile: key, encoding: .utf8)
        #expect(text.hasPrefix("ark1-") && text.count == 70)
        let again = try ChildProcess(analogRemote: ["keygen", "--output", key])
        #expect(again.wait() == 2 && again.stderr.contains("never overwritten"), "\(again.stderr)")

        let r = try ClassroomReceiver(["--session", "class-3b", "--teacher-key-file", key, "--name", "robot-1"])
        let stop = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(r.port)",
                                                   "--teacher-key-file", key])
        #expect(stop.wait() == 0, "\(stop.stdout)\(stop.stderr)")
        #expect(stop.stdout.contains("stopped \"robot-1\""), "\(stop.stdout)")
        #expect(stop.stderr.isEmpty, "no warning for a key file: \(stop.stderr)")
        // Typed on the command line (the same key's text): works, and warns.
        let typed = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(r.port)",
                                                    "--release", "--teacher-key", text.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(typed.wait() == 0, "\(typed.stdout)\(typed.stderr)")
        #expect(typed.stderr.contains("warning: --teacher-key on the command line can be read by every user"), "\(typed.stderr)")
        let summary = try r.stop()
        #expect(!r.process.stderr.contains(text.trimmingCharacters(in: .whitespacesAndNewlines)), "the key was logged")
        _ = summary
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func aKeyFileOthersMayReadIsRefusedInOneLineWithStatus2(mode: Int) throws {
        let key = Self.temporary("teacher.key")
        try Self.write(TeacherKey.generate() + "\n", to: key, mode: mode)
        for args in [["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--teacher-key-file", key],
                     ["stop-all", "--quiet", "--session", "s", "--peer", "127.0.0.1:9", "--teacher-key-file", key]] {
            let p = try ChildProcess(analogRemote: args)
            #expect(p.wait() == 2, "\(args[0]): \(p.stderr)")
            let lines = p.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("chmod 600 \(key)"), "\(args[0]): \(p.stderr)")
        }
    }

    @Test func aConfigHoldingASecretMustBePrivateToo() throws {
        let config = Self.temporary("receive.toml")
        try Self.write("board = \"sim\"\nno-advertise = true\nteacher-key = \"correct horse battery staple\"\n", to: config, mode: 0o644)
        let open = try ChildProcess(analogRemote: ["receive", "--quiet", "--port", "0", "--config", config])
        #expect(open.wait() == 2, "\(open.stderr)")
        #expect(open.stderr.contains(config) && open.stderr.contains("teacher-key") && open.stderr.contains("chmod 600"), "\(open.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config)
        let r = try ChildProcess(analogRemote: ["receive", "--quiet", "--port", "0", "--config", config, "--trace-board"])
        _ = try ClassroomReceiver.port(of: r, what: "receiver")
        #expect(!r.stderr.contains("warning"), "a key from a config is not in argv: \(r.stderr)")
        r.signal(SIGTERM)
        #expect(r.wait() == 0, "\(r.stderr)")
    }

    /// A reply that says "stopped" but is not signed with the teacher key (a forged one, here
    /// from a fake receiver) is shown as such and never counted: stop-all exits 1.
    @Test func aStopAllReplyNotSignedWithTheTeacherKeyIsNotCounted() throws {
        let key = Self.temporary("teacher.key")
        try Self.write(TeacherKey.generate() + "\n", to: key, mode: 0o600)
        let fake = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { fake.close() }
        let port = try fake.localAddress().port
        let stop = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(port)",
                                                   "--teacher-key-file", key])
        var buffer = [UInt8](repeating: 0, count: 2048)
        var answered = 0
        while stop.isRunning {
            guard let (length, from) = try fake.receive(into: &buffer, timeout: .milliseconds(50)),
                  let d = try? ControlDatagram.decode(Array(buffer[..<length])),
                  case .stopAll(let command)? = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
            let reply = ControlMessage.StopAllReply(nonce: command.nonce, outcome: .stopped, displayName: "robot-1")
            _ = try fake.send(ControlDatagram(header: ControlHeader(type: .stopAllReply, connection: 7),
                                              payload: ControlMessage.stopAllReply(reply).encodePayload()[...]).encode(), to: from)
            answered += 1
        }
        #expect(answered >= 2, "the query and the command were answered")
        #expect(stop.wait() == 1, "\(stop.stdout)\(stop.stderr)")
        #expect(stop.stdout.contains("not signed with this teacher key") && stop.stdout.hasSuffix("reached 0 of 1 receiver\n"),
                "\(stop.stdout)")
    }

    @Test func shortPassphrasesAreRefused() throws {
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--teacher-key", "k3y"])
        #expect(p.wait() == 64)
        #expect(p.stderr.contains("at least 12") && p.stderr.contains("keygen"), "\(p.stderr)")
    }

    /// The robot's secret from a file: the controller drives with it; the words are not shown
    /// and never in a log line, even at debug level.
    @Test func theSecretFromAFileDrivesAndIsNeverLogged() throws {
        let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"
        let file = Self.temporary("robot.secret")
        try Self.write(words + "\n", to: file, mode: 0o600)
        let r = try ClassroomReceiver(["--accept", "secret", "--secret-file", file, "--log-level", "debug", "--failsafe-ms", "5000"])
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--secret-file", file,
                                                      "--log-level", "debug", "--input", "stdin"], stdin: true)
        #expect(control.waitForOutput { _, err in err.contains("accepted by") }, "\(control.stderr)")
        control.write("0 none\n0 forward\n")
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap }, "\(r.process.stderr)")
        control.closeStdin()
        #expect(control.wait() == 0, "\(control.stderr)")
        _ = try r.stop()
        for text in [r.process.stdout, r.process.stderr, control.stderr] {
            #expect(!text.contains("acorn actor"), "the secret words leaked: \(text.suffix(500))")
        }
    }
}
