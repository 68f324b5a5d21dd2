import ConfigFile
import Foundation
import Gamepad
import RemoteWire
import Testing

@Suite struct GamepadConfigTests {
    func parse(_ text: String) throws(GamepadConfigError) -> GamepadConfig {
        try GamepadConfig.parse(text, file: "pad.toml")
    }

    func error(_ text: String) -> GamepadConfigError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func noGamepadTableMeansDefaults() throws {
        #expect(try parse("").mapping == .standard)
        #expect(try parse("").sdlMappings.isEmpty)
        #expect(try parse("# nothing but a comment\n").mapping == .standard)
        // Tables this file does not know are errors now (a typo must not be silently ignored).
        #expect(error("[keyboard]\nstep = 0.1")?.key == "keyboard")
    }

    @Test func everyKeyIsRead() throws {
        let config = try parse("""
            [gamepad]
            steer_axis = "rightx"
            invert_steer = true
            full_lock = 1
            deadzone = 0.1
            expo = 0.3
            threshold = 0.25
            enable = "leftshoulder"
            stop = "guide"
            mappings = ["0300abcd5e0400008e02000014010000,My Pad,a:b0,b:b1"]

            [gamepad.buttons]
            forward = ["dpup", "lefty-", "righttrigger"]
            a = "east"
            b = []
            l = ""
            """)
        let m = config.mapping
        #expect(m.steerAxis == .rightX)
        #expect(m.invertSteer)
        #expect(m.fullLockAngle == 1)
        #expect(m.deadzone == 0.1)
        #expect(m.expo == 0.3)
        #expect(m.threshold == 0.25)
        #expect(m.enable == .button(.leftShoulder))
        #expect(m.stop == .button(.guide))
        #expect(config.sdlMappings == ["030000005e0400008e02000014010000,My Pad,a:b0,b:b1"])
        #expect(m.controls(for: .forward) == [.button(.dpadUp), .stick(.leftY, positive: false), .trigger(.rightTrigger)])
        #expect(m.controls(for: .a) == [.button(.east)])
        #expect(m.controls(for: .b) == [])
        #expect(m.controls(for: .l) == [])
        #expect(m.controls(for: .backward) == GamepadMapping.standard.controls(for: .backward), "unlisted bits keep their default")
        #expect(m.bindings.map(\.bit) == GamepadMapping.standardBindings.map(\.bit), "bit order is kept")
        #expect(config.file == "pad.toml")
    }

    @Test(arguments: [
        ("[gamepad]\ndeadzone = 1.5", "pad.toml: gamepad.deadzone: 1.5 is not allowed (allowed: a number from 0 up to, not including, 1)"),
        ("[gamepad]\ndeadzone = \"big\"", "pad.toml: gamepad.deadzone: \"big\" is not allowed (allowed: a number from 0 up to, not including, 1)"),
        ("[gamepad]\nfull_lock = 2", "pad.toml: gamepad.full_lock: 2 is not allowed (allowed: radians, more than 0 and at most π/2 = 1.5707964)"),
        ("[gamepad]\nexpo = -0.1", "pad.toml: gamepad.expo: -0.1 is not allowed (allowed: a number from 0 to 1)"),
        ("[gamepad]\nthreshold = 1", "pad.toml: gamepad.threshold: 1 is not allowed (allowed: a number between 0 and 1, both excluded)"),
        ("[gamepad]\nsteer_axis = \"lefttrigger\"", "pad.toml: gamepad.steer_axis: \"lefttrigger\" is not allowed (allowed: leftx, lefty, rightx, righty)"),
        ("[gamepad]\ninvert_steer = 1", "pad.toml: gamepad.invert_steer: 1 is not allowed (allowed: true or false)"),
        ("[gamepad]\nmappings = [\"nonsense\"]", "pad.toml: gamepad.mappings[0]: \"nonsense\" is not allowed (allowed: an SDL mapping line \"GUID,name,a:b0,…\" with a 32-hex-digit GUID)"),
        ("gamepad = 3", "pad.toml: gamepad: must be a table ([gamepad])"),
    ])
    func badValuesNameFileKeyAndWhatIsAllowed(text: String, message: String) {
        #expect(error(text)?.description == message)
    }

    @Test(arguments: [
        ("030000005e0400008e02000014010000,X,a:b0", "030000005e0400008e02000014010000,X,a:b0"),
        ("0300abcd5e0400008e02000014010000,X,a:b0,", "030000005e0400008e02000014010000,X,a:b0,"),
        ("0300abcd5e0400008e02000014010000,X,a:b0,crc:abcd,", "0300abcd5e0400008e02000014010000,X,a:b0,crc:abcd,"),
        ("xinput,XInput Controller,a:b0", "xinput,XInput Controller,a:b0"),
    ])
    func mappingLinesAreCheckedAndTheNameChecksumCleared(line: String, expected: String) {
        #expect(SDLMappingLine.normalized(line) == expected)
    }

    @Test(arguments: ["030000005e0400008e02000014010000,X", "not-a-guid,X,a:b0", "030000005e0400008e02000014010000, ,a:b0",
                      "030000005e0400008e02000014010000,X,a=b0", "030000005e0400008e0200001401000,X,a:b0"])
    func refusesWhatIsNotAMappingLine(line: String) {
        #expect(SDLMappingLine.normalized(line) == nil)
    }

    @Test func unknownKeysAndControlsListTheAllowedOnes() throws {
        let typo = try #require(error("[gamepad]\ndeadzon = 0.1"))
        #expect(typo.key == "gamepad.deadzon")
        #expect(typo.description.hasPrefix("pad.toml: gamepad.deadzon: unknown key (allowed: buttons, deadzone, "))

        let bit = try #require(error("[gamepad.buttons]\njump = \"south\""))
        #expect(bit.description.hasPrefix("pad.toml: gamepad.buttons.jump: not a packet bit (allowed: forward, backward, a, b, x, y,"))

        let control = try #require(error("[gamepad.buttons]\nforward = [\"dpup\", \"A\"]"))
        #expect(control.key == "gamepad.buttons.forward[1]")
        #expect(control.description.contains("\"A\" is not a control (allowed: south, east, west, north,"))

        let enable = try #require(error("[gamepad]\nenable = \"shoulder\""))
        #expect(enable.key == "gamepad.enable")
        #expect(enable.description.contains("lefttrigger, righttrigger, leftx+, leftx-"))

        #expect(try parse("[gamepad]\nenable = \"\"").mapping.enable == nil)
        #expect(try parse("[gamepad]\nfull_lock = 1.5707964").mapping.fullLockAngle == ControllerState.maxAngle)
        #expect(try parse("[gamepad]\nfull_lock = 1.5707963267948966").mapping.fullLockAngle == ControllerState.maxAngle)
    }

    /// Unknown top-level tables and keys in [gamepad] are errors naming them, with a suggestion for a typo
    /// (`[gamepd]` was silently ignored before).
    @Test func unknownTablesAreErrorsNamingTheKey() throws {
        let table = try #require(error("[gamepd]\ndeadzone = 0.1"))
        #expect(table.key == "gamepd")
        #expect(table.description == "pad.toml: gamepd: unknown key or table (allowed: [gamepad], [midi]) (did you mean \"gamepad\"?)")
        // A top-level plain key is one of `control`'s options in control.toml (checked by the
        // command's config overlay, ConfigFileEndToEndTests), not the gamepad reader's business.
        #expect(error("deadzone = 0.1\n[gamepad]\n") == nil)
        let typo = try #require(error("[gamepad]\ndeadzon = 0.1"))
        #expect(typo.description.hasSuffix("(did you mean \"deadzone\"?)"))
        let bit = try #require(error("[gamepad.buttons]\nfoward = \"south\""))
        #expect(bit.description.hasSuffix("(did you mean \"forward\"?)"))
    }

    @Test func messagesAreOneLine() {
        for text in ["[gamepad]\ndeadzon = 1", "[gamepad.buttons]\nforward = 3", "[gamepad\n", "a = = 1"] {
            let message = error(text)?.description ?? ""
            #expect(!message.isEmpty && !message.contains("\n"), "\(text): \(message)")
        }
    }

    @Test func syntaxErrorsNameTheLine() throws {
        let bad = try #require(error("[gamepad]\ndeadzone = 0.1\nexpo = = 2\n"))
        #expect(bad.key == nil)
        #expect(bad.description.hasPrefix("pad.toml: line 3"))
        #expect(bad.description.hasSuffix("(not valid TOML)"))
    }

    @Test func loadsFromAFileAndNamesAMissingOne() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gamepad-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("pad.toml")
        try Data("[gamepad]\nexpo = 0.5\n".utf8).write(to: file)
        #expect(try GamepadConfig.load(path: file.path).mapping.expo == 0.5)

        let missing = dir.appendingPathComponent("nope.toml").path
        #expect(throws: GamepadConfigError.self) { try GamepadConfig.load(path: missing) }
        do {
            _ = try GamepadConfig.load(path: missing)
        } catch {
            #expect(error.description == "\(missing): cannot read it: no such file or directory")
        }
        // Issue 19: a FIFO is refused before open(2) could block; a NUL byte is an error.
        let fifo = dir.appendingPathComponent("fifo.toml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: GamepadConfigError(file: fifo, key: nil, problem: "a FIFO, not a regular file; allowed: a regular file")) {
            try GamepadConfig.load(path: fifo)
        }
        let nul = dir.appendingPathComponent("nul.toml")
        try Data("[gamepad]\nexpo = 0.5\u{0}\nexpo = 9\n".utf8).write(to: nul)
        #expect(throws: GamepadConfigError(file: nul.path, key: nil, problem: "a NUL byte at offset 20 (line 2); allowed: text without NUL bytes")) {
            try GamepadConfig.load(path: nul.path)
        }
        // TOMLKit aborts the process on these (found by fuzzing): refused with one line first.
        #expect(throws: GamepadConfigError(file: "pad.toml", key: nil,
                                           problem: "line 2: a table header must start with a key name or a quoted key, e.g. [drive] (not valid TOML)")) {
            try GamepadConfig.parse("[gamepad]\n[?x]\n", file: "pad.toml")
        }
        #expect(throws: GamepadConfigError(file: "pad.toml", key: nil, problem: "line 2: a } where an array element belongs (not valid TOML)")) {
            try GamepadConfig.parse("[gamepad]\nmappings = [}\n", file: "pad.toml")
        }
    }
}
