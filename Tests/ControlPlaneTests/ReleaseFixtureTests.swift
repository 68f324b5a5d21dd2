import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import TestSupport
import Testing

/// Files and datagrams made by release 0.1.0 (its `keygen`, a passphrase file, its `stop-all` and
/// its receiver's signed replies, its receiver's secret words; vectors/v0.1.0/), back when the core
/// signed with swift-crypto: a classroom that upgrades keeps its key files, and robots of the old
/// and the new release answer one teacher.
@Suite struct ReleaseFixtureTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: Paths.repositoryFile("vectors/v0.1.0/\(name)"), encoding: .utf8)
    }

    /// The key file as a teacher keeps it: only its owner may read it (git keeps no modes).
    static func key(_ name: String) throws -> TeacherKey {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("release-fixture-\(getpid())-\(name)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try fixture(name).write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        return try TeacherKey(file: path)
    }

    static func message(_ name: String) throws -> ControlMessage {
        let hex = try fixture(name).trimmingCharacters(in: .whitespacesAndNewlines)
        let d = try ControlDatagram.decode(try #require(Hex.bytes(hex)))
        return try ControlMessage.decode(type: d.header.type, payload: d.payload)
    }

    @Test(arguments: ["generated", "passphrase"])
    func oldStopsAndRepliesVerifyUnderTheSameKeyFile(kind: String) throws {
        let key = try Self.key("teacher-\(kind).key")
        guard case .stopAll(let stop) = try Self.message("stop-all-\(kind).hex"),
              case .stopAllReply(let reply) = try Self.message("stopped-reply-\(kind).hex") else {
            Issue.record("the fixtures are not a stop-all and its reply"); return
        }
        #expect(stop.session.text == "lesson-1" && reply.nonce == stop.nonce && reply.outcome == .stopped)
        #expect(stop.verify(key: key.macKey), "a stop-all of 0.1.0 checks out")
        #expect(reply.verify(key: key.macKey), "a reply of a 0.1.0 receiver checks out")
        var again = stop
        again.sign(key: key.macKey)
        #expect(again.mac == stop.mac, "this release signs the same bytes")
        let other = try Self.key(kind == "generated" ? "teacher-passphrase.key" : "teacher-generated.key")
        #expect(!stop.verify(key: other.macKey) && !reply.verify(key: other.macKey))
    }

    @Test func oldSecretWordsStillParse() throws {
        let words = try Self.fixture("robot.secret")
        let secret = try RobotSecret.parse(words).get()
        #expect(secret.words == words.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
