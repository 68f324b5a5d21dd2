import Foundation
import SystemIO
import Testing

@Suite struct StateDirectoryTests {
    @Test func systemdThenXDGThenHome() {
        #expect(StateDirectory.path(environment: ["STATE_DIRECTORY": "/var/lib/analog-remote", "XDG_STATE_HOME": "/x", "HOME": "/h"])
                == "/var/lib/analog-remote")
        #expect(StateDirectory.path(environment: ["STATE_DIRECTORY": "/var/lib/a:/var/lib/b"]) == "/var/lib/a", "the first of a list")
        #expect(StateDirectory.path(environment: ["STATE_DIRECTORY": "relative", "XDG_STATE_HOME": "/x", "HOME": "/h"]) == "/x/analog-remote")
        #expect(StateDirectory.path(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/analog-remote")
    }

    /// Made once (with its missing parents), then read back as it is, whatever `make` says later.
    @Test func aFileIsMadeOnceAndKept() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-state-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let dir = base + "/a/b"
        #expect(try StateDirectory.keep("robot-id", in: dir) { Array("first\n".utf8) } == Array("first\n".utf8))
        #expect(try StateDirectory.keep("robot-id", in: dir) { Array("second\n".utf8) } == Array("first\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["robot-id"], "nothing left aside")
    }

    @Test func aDirectoryThatCannotBeMadeIsOneLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-state-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: StateDirectoryError.self) { try StateDirectory.keep("robot-id", in: file + "/sub") { [1] } }
        do {
            _ = try StateDirectory.keep("robot-id", in: file + "/sub") { [1] }
        } catch {
            #expect(error.description == "\(file)/sub: cannot create it: not a directory")
        }
    }
}
