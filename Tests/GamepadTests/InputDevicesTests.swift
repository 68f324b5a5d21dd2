import Foundation
import Gamepad
import Testing

@Suite struct InputDevicesTests {
    @Test func reportsOnlyUnreadableEventAndJoystickNodes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("input-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["event0", "event1", "js0", "mouse0", "by-id"] {
            #expect(FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: Data()))
        }
        #expect(InputDevices.unreadable(in: dir.path).isEmpty)
        for name in ["event1", "mouse0"] {
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: dir.appendingPathComponent(name).path)
        }
        // root reads everything; anyone else cannot read event1 now (mouse0 is not a pad node).
        let expected = getuid() == 0 ? [] : [dir.appendingPathComponent("event1").path]
        #expect(InputDevices.unreadable(in: dir.path) == expected)
        #expect(InputDevices.unreadable(in: dir.appendingPathComponent("missing").path).isEmpty)
    }
}
