import Foundation
import Receiver
import RemoteWire
import Testing

/// The `robot-id` file is outside input: whatever it holds, the receiver starts, with the kept id
/// when the file holds exactly one, else with an id for this run and one line saying why.
@Suite struct RobotIdentityTests {
    private func directory(holding bytes: [UInt8]?) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-id-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if let bytes { _ = FileManager.default.createFile(atPath: dir + "/" + RobotIdentity.fileName, contents: Data(bytes)) }
        return dir
    }

    @Test func theIdIsMadeOnceThenKept() throws {
        let dir = directory(holding: nil)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = RobotIdentity.load(directory: dir)
        #expect(first.warning == nil)
        let second = RobotIdentity.load(directory: dir)
        #expect(second.id == first.id && second.warning == nil)
        #expect(try String(contentsOfFile: dir + "/robot-id", encoding: .utf8) == first.id.text + "\n")
    }

    @Test func aKeptIdIsReadWithSurroundingWhitespace() {
        let dir = directory(holding: Array("  k3m9x2ab \n\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let loaded = RobotIdentity.load(directory: dir)
        #expect(loaded.id.text == "k3m9x2ab" && loaded.warning == nil)
        let upper = directory(holding: Array("K3M9X2AB\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: upper) }
        #expect(RobotIdentity.load(directory: upper).id.text == "k3m9x2ab", "read as the same id, whatever its case")
    }

    @Test(arguments: [
        [UInt8](),                                    // empty
        Array("k3m9x2a\n".utf8),                      // 7 characters
        Array("k3m9x2abc\n".utf8),                    // 9 characters
        Array("k3m9x2al\n".utf8),                     // l is not in the alphabet
        Array("k3m9x2ab k3m9x2ab\n".utf8),            // two ids
        [0xFF, 0xFE, 0x00, 0x1B, 0x5B, 0x32, 0x4A],   // binary, an escape sequence
    ])
    func aFileWithoutOneIdGivesAnIdForThisRunAndOneLine(bytes: [UInt8]) throws {
        let dir = directory(holding: bytes)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let loaded = RobotIdentity.load(directory: dir)
        let warning = try #require(loaded.warning)
        #expect(warning.hasPrefix("\(dir)/robot-id holds no robot id"))
        #expect(!warning.contains("\n") && warning.contains(loaded.id.text))
        #expect(RobotID(loaded.id.text) == loaded.id)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/robot-id")) == Data(bytes), "the file is left as it was")
    }
}
