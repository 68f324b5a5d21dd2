import Foundation
import TestSupport
import Testing

/// `analog-remote gamepads`, run as a user would.
@Suite struct GamepadsCommandTests {
    /// Whether this machine has any input devices SDL could list (none in the sandbox / CI).
    static var machineHasInputDevices: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/input")) ?? []
        return names.contains { $0.hasPrefix("event") || $0.hasPrefix("js") }
    }

    @Test func withoutPadsItSaysSoAndSucceeds() throws {
        let run = try ChildProcess(analogRemote: ["gamepads"], environment: ["SDL_JOYSTICK_HIDAPI": "0"])
        #expect(run.wait() == 0)
        if Self.machineHasInputDevices {
            // A developer's machine may have a pad: then it is a table.
            #expect(run.stdout == "no gamepads found\n" || run.stdout.hasPrefix("index "))
        } else {
            #expect(run.stdout == "no gamepads found\n")
        }
        #expect(run.stderr.isEmpty)
    }

    @Test func listsIndexNameGUIDAndMapping() throws {
        let run = try ChildProcess(analogRemote: ["gamepads", "--virtual-pad", "ARTest Pad One", "--virtual-pad", "ARTest Two"],
                                   environment: ["SDL_JOYSTICK_HIDAPI": "0"])
        #expect(run.wait() == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["index", "name", "GUID", "mapping"])
        for name in ["ARTest Pad One", "ARTest Two"] {
            let row = try #require(lines.first { $0.contains(name) }, "\(run.stdout)")
            let fields = row.replacingOccurrences(of: name, with: "NAME").split(separator: " ").map(String.init)
            #expect(fields.count == 4, "\(row)")
            #expect(Int(fields[0]) != nil)
            #expect(fields[2].count == 32 && fields[2].allSatisfy(\.isHexDigit))
            #expect(fields[3] == "yes")
        }
    }

    @Test(arguments: [
        ("[gamepad]\ndeadzone = 2\n", "gamepad.deadzone: 2 is not allowed (allowed: a number from 0 up to, not including, 1)"),
        ("[gamepad.buttons]\nforward = \"trigger\"\n", "gamepad.buttons.forward: \"trigger\" is not a control (allowed: south, east,"),
        ("[gamepad\n", "line 1"),
    ])
    func aBadConfigIsOneLineAndExitTwo(text: String, message: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gamepads-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).toml")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try ChildProcess(analogRemote: ["gamepads", "--config", file.path])
        #expect(run.wait() == 2)
        #expect(run.stderr.hasPrefix("analog-remote: \(file.path): "))
        #expect(run.stderr.contains(message))
        #expect(run.stderr.filter { $0 == "\n" }.count == 1, "one line: \(run.stderr)")
        #expect(run.stdout.isEmpty)
    }
}
