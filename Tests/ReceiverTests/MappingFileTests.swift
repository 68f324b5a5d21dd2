import ConfigFile
import Foundation
import BoardProtocol
import Receiver
import RemoteWire
import TestSupport
import Testing

/// A bad mapping file → exactly one line naming the file, the key (or line) and what is allowed.
struct BadMapping: Sendable, CustomTestStringConvertible {
    let text: String
    let json: Bool
    let message: String
    var testDescription: String { message }

    static func toml(_ text: String, _ message: String) -> BadMapping { .init(text: text, json: false, message: "m.toml: " + message) }
    static func json(_ text: String, _ message: String) -> BadMapping { .init(text: text, json: true, message: "m.json: " + message) }
}

let buttonNames = "one of forward, backward, a, b, x, y, l, r, start, select, home, l3, r3, left, right"
let byteRun = "an integer 0…255, or an array of 1…8 of them for consecutive addresses"

let badMappings: [BadMapping] = [
    .toml("motors = 1", "motors: unknown key; allowed: profile, drive, buttons, buttons_byte"),
    .toml("[drive]\nsped = 64", "drive.sped: unknown key; allowed: speed, full_lock, deadzone, expo, left, right (did you mean \"speed\"?)"),
    .toml("[drive]\nspeed = 200", "drive.speed: got the integer 200; allowed: an integer 0…127"),
    .toml("[drive]\nspeed = -1", "drive.speed: got the integer -1; allowed: an integer 0…127"),
    .toml("[drive]\nspeed = \"fast\"", "drive.speed: got the string \"fast\"; allowed: an integer 0…127"),
    .toml("[drive]\nspeed = 64.5", "drive.speed: got the number 64.5; allowed: an integer 0…127"),
    .toml("[drive]\nspeed = 1979-05-27", "drive.speed: got a date; allowed: an integer 0…127"),
    .toml("[drive]\nfull_lock = 2.0",
          "drive.full_lock: got the number 2.0; allowed: a number of radians above drive.deadzone (default 0.05) and at most 1.5707964 (pi/2)"),
    .toml("[drive]\nfull_lock = 0.04",
          "drive.full_lock: got the number 0.04; allowed: a number of radians above drive.deadzone (default 0.05) and at most 1.5707964 (pi/2)"),
    .toml("[drive]\nfull_lock = 0\ndeadzone = 0",
          "drive.full_lock: got the integer 0; allowed: a number of radians above 0 and at most 1.5707964 (pi/2)"),
    .toml("[drive]\ndeadzone = 0.9",
          "drive.deadzone: got the number 0.9; allowed: a number of radians, at least 0 and below drive.full_lock (0.7853982)"),
    .toml("[drive]\nfull_lock = 0.5\ndeadzone = -0.1",
          "drive.deadzone: got the number -0.1; allowed: a number of radians, at least 0 and below drive.full_lock (0.5)"),
    .toml("[drive]\nexpo = 2", "drive.expo: got the integer 2; allowed: a number from 0 (linear) to 1 (cubic)"),
    .toml("[drive]\nexpo = nan", "drive.expo: got the number nan; allowed: a number from 0 (linear) to 1 (cubic)"),
    .toml("[drive.left]\naddress = 0x40",
          "drive.left.address: got the address 64 (0x40); allowed: an address 0x00…0x23 (an integer, or a string like \"0x0f\")"),
    .toml("[drive.left]\naddress = \"LED\"",
          "drive.left.address: got the string \"LED\"; allowed: an address 0x00…0x23 (an integer, or a string like \"0x0f\")"),
    .toml("[drive.left]\ninvert = \"yes\"", "drive.left.invert: got the string \"yes\"; allowed: true or false"),
    .toml("[drive.left]\nport = 1", "drive.left.port: unknown key; allowed: address, invert, led"),
    .toml("[drive]\nleft = 3", "drive.left: got the integer 3; allowed: a table with keys address, invert, led"),
    .toml("[drive.right]\naddress = 0x22", "drive.right.address: both motors are at 0x22; allowed: two different addresses"),
    .toml("buttons = 5", "buttons: got the integer 5; allowed: an array of tables ([[buttons]] in TOML)"),
    .toml("buttons = [1]", "buttons[0]: got the integer 1; allowed: a table with keys button, address, on, off"),
    .toml("[[buttons]]\nbutton = \"z\"\naddress = 0x0F\non = 255", "buttons[0].button: got the string \"z\"; allowed: \(buttonNames)"),
    .toml("[[buttons]]\naddress = 0x0F\non = 255", "buttons[0].button: missing; allowed: \(buttonNames)"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x0F", "buttons[0].on: missing; allowed: \(byteRun)"),
    .toml("[[buttons]]\nbutton = \"a\"\non = 1", "buttons[0].address: missing; allowed: an address 0x00…0x23 (an integer, or a string like \"0x0f\")"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x0F\non = 256", "buttons[0].on: got the integer 256; allowed: \(byteRun)"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x0F\non = []", "buttons[0].on: got an array; allowed: \(byteRun)"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x0F\non = [1, 300]", "buttons[0].on[1]: got the integer 300; allowed: an integer 0…255"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x09\non = [1, 2]\noff = 0",
          "buttons[0].off: has 1 values but on has 2; allowed: as many off values as on values"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x22\non = 1",
          "buttons[0].address: writes 0x22, which is drive.left.address; allowed: an address the drive does not use"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x21\non = [1, 2]",
          "buttons[0].address: writes 0x22, which is drive.left.address; allowed: an address the drive does not use"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x23\non = [1, 2]\n[drive.right]\naddress = 0x20",
          "buttons[0].address: got the address 35 (0x23); allowed: an address 0x00…0x22 (an integer, or a string like \"0x0f\") leaving room for 2 values"),
    .toml("[[buttons]]\nbutton = \"x\"\naddress = 0x09\non = 13\n[[buttons]]\nbutton = \"y\"\naddress = 0x09\non = 20\noff = 5",
          "buttons[1].off: releases 0x09 to 5 but buttons[0] releases it to 0; allowed: the same off value for every binding of an address"),
    .toml("[[buttons]]\nbutton = \"a\"\naddress = 0x0F\non = 1\nextra = true",
          "buttons[0].extra: unknown key; allowed: button, address, on, off"),
    .toml("[drive\nspeed = 1", "line 1: TOML syntax error: Error while parsing table header: expected ']', saw '\\n'"),
    .toml("[drive]\nspeed = 1\nspeed = 2", "line 3: TOML syntax error: Error while parsing key-value pair: cannot redefine existing integer 'speed'"),
    .json("[1]", "(top level): got an array; allowed: a table with keys profile, drive, buttons, buttons_byte"),
    .json("{\"drive\": {\"speed\": true}}", "drive.speed: got true; allowed: an integer 0…127"),
    .json("{\"drive\": {\"speed\": null}}", "drive.speed: got null; allowed: an integer 0…127"),
    .json("{\"drive\": {\"left\": {\"address\": \"0x99\"}}}",
          "drive.left.address: got the string \"0x99\"; allowed: an address 0x00…0x23 (an integer, or a string like \"0x0f\")"),
    .json("{\n  \"drive\": {\n    \"speed\": \n  }\n}", "line 4: JSON syntax error: unexpected character '}'"),
    // Strict JSON (issue 19): a trailing comma, trailing garbage, duplicate keys, comments.
    .json("{\"drive\": {\"speed\": 64,}}", "line 1: JSON syntax error: expected a \"key\" (a trailing comma is not allowed)"),
    .json("{\"buttons\": [],\n}", "line 2: JSON syntax error: expected a \"key\" (a trailing comma is not allowed)"),
    .json("{\"buttons\": [{\"button\": \"a\", \"address\": 15, \"on\": [1, 2,]}]}", "line 1: JSON syntax error: a trailing comma is not allowed"),
    .json("{\"drive\": {}} x", "line 1: JSON syntax error: trailing characters after the JSON value"),
    .json("{\"drive\": {}}{}", "line 1: JSON syntax error: trailing characters after the JSON value"),
    .json("{\"drive\": {}, \"drive\": {}}", "line 1: JSON syntax error: duplicate key \"drive\""),
    .json("// kit\n{}", "line 1: JSON syntax error: unexpected character '/'"),
    .json("{\"drive\": {\"speed\": 064}}", "line 1: JSON syntax error: a number with a leading zero"),
    .json("{\"drive\": {\"expo\": NaN}}", "line 1: JSON syntax error: unexpected character 'N'"),
    // A NUL byte: a C parser would stop there and silently drop the rest (issue 19).
    .toml("[drive]\nspeed = 64\u{0}\nspeed = 999", "a NUL byte at offset 18; allowed: text without NUL bytes"),
    .json("{}\u{0}garbage", "a NUL byte at offset 2; allowed: text without NUL bytes"),
    // Shapes that make TOMLKit abort the process (found by fuzzing): refused before it sees them.
    .toml("[drive]\nspeed = 64\n[?x]\n", "line 3: a table header must start with a key name or a quoted key, e.g. [drive] (not valid TOML)"),
    .toml("[drive]\nspeed = [}\n", "line 2: a } where an array element belongs (not valid TOML)"),
]

@Suite struct MappingFileTests {
    @Test(arguments: [("config-examples/motors-map.toml", Mapping.motors), ("config-examples/motors-map.json", Mapping.motors),
                      ("config-examples/stock-map.toml", Mapping.stock)])
    func shippedExamplesAreTheBuiltInDefaults(path: String, mapping: Mapping) throws {
        let document = try MappingFile.document(path: Paths.repositoryFile(path).path)
        #expect(document.profile == mapping.profile)
        #expect(try document.mapping(for: mapping.profile) == mapping)
    }

    @Test func aFileMayNameItsProfileAndGetsThatProfilesDefaults() throws {
        let stock = try MappingFile.parseDocument("profile = \"stock\"", json: false, file: "s.toml")
        #expect(stock.profile == .stock)
        #expect(try stock.mapping(for: .stock) == Mapping.stock)
        let unnamed = try MappingFile.parseDocument("[drive]\nspeed = 100", json: false, file: "u.toml")
        #expect(unnamed.profile == nil)
        #expect(try unnamed.mapping(for: .stock).drive.left.led == 0x0F, "an unnamed file goes over the board's profile")
        #expect(try unnamed.mapping(for: .motors).drive.left.address == 0x22)
    }

    @Test(arguments: [
        ("profile = \"stock\"\n[drive.left]\naddress = 0x22",
         "s.toml: drive.left.address: got the address 34 (0x22); allowed: an address 0x00…0x21 (an integer, or a string like \"0x0f\") on the stock profile's 34-byte map"),
        ("profile = \"tank\"", "s.toml: profile: got the string \"tank\"; allowed: \"stock\" (the published firmware, 34 bytes) or \"motors\" (motor bytes at 0x22/0x23)"),
        ("profile = \"stock\"\nbuttons_byte = 0x0f", "s.toml: buttons_byte: writes 0x0f, which is drive.left.led; allowed: an address the drive does not use"),
        ("profile = \"stock\"\n[[buttons]]\nbutton = \"b\"\naddress = 0x10\non = 1", "s.toml: buttons[0].address: writes 0x10, which is drive.right.led; allowed: an address the drive does not use"),
    ])
    func stockFilesAreCheckedAgainstTheStockMap(text: String, message: String) {
        #expect(throws: MappingFileError.self) { try MappingFile.parseDocument(text, json: false, file: "s.toml") }
        do {
            _ = try MappingFile.parseDocument(text, json: false, file: "s.toml")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func ledsAndTheButtonsByteCanBeSwitchedOff() throws {
        let doc = try MappingFile.parseDocument("profile = \"stock\"\nbuttons_byte = \"none\"\n[drive.left]\nled = \"none\"",
                                                json: false, file: "n.toml")
        let mapping = try doc.mapping(for: .stock)
        #expect(mapping.buttonsByte == nil && mapping.drive.left.led == nil && mapping.drive.right.led == 0x10)
    }

    @Test func missingKeysKeepTheDefaultsAndAnEmptyButtonListBindsNothing() throws {
        #expect(try MappingFile.parse("", json: false, file: "e.toml") == Mapping.kit)
        #expect(try MappingFile.parse("{}", json: true, file: "e.json") == Mapping.kit)
        let none = try MappingFile.parse("buttons = []", json: false, file: "n.toml")
        #expect(none.buttons.isEmpty && none.drive == Mapping.kit.drive)
        #expect(none.restValues == [0x22: 0, 0x23: 0])
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            [drive]
            speed = 100
            full_lock = 1
            deadzone = 0
            expo = 0.25
            left = { address = "0x20", invert = false }
            right = { address = 33, invert = true }
            [[buttons]]
            button = "X"
            address = "9"
            on = [13, 30]
            off = [0, 1]
            """
        let m = try MappingFile.parse(text, json: false, file: "all.toml")
        #expect(m.drive == DriveMapping(speed: 100, fullLock: 1, deadzone: 0, expo: 0.25,
                                        left: .init(address: 0x20, inverted: false), right: .init(address: 0x21, inverted: true)))
        #expect(m.buttons == [ButtonBinding(button: .x, address: 9, on: [13, 30], off: [0, 1])])
    }

    @Test(arguments: badMappings)
    func badFileIsOneLineNamingFileKeyAndWhatIsAllowed(bad: BadMapping) {
        let file = bad.json ? "m.json" : "m.toml"
        #expect(throws: Never.self) {
            do {
                _ = try MappingFile.parse(bad.text, json: bad.json, file: file)
                Issue.record("accepted: \(bad.text)")
            } catch let error as MappingFileError {
                #expect(error.description == bad.message)
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func fileLevelProblems() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-map-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("nope.toml").path
        #expect(throws: MappingFileError(file: missing, location: "", problem: "cannot read the mapping file: no such file or directory")) {
            try MappingFile.load(path: missing)
        }
        let yaml = dir.appendingPathComponent("map.yaml").path
        #expect(throws: MappingFileError(file: yaml, location: "", problem: "unknown mapping file type; allowed: a .toml or .json file")) {
            try MappingFile.load(path: yaml)
        }
        let binary = dir.appendingPathComponent("bin.toml")
        try Data([0x5B, 0xFF, 0xFE, 0x5D]).write(to: binary)
        #expect(throws: MappingFileError(file: binary.path, location: "", problem: "not UTF-8 text; allowed: a UTF-8 TOML or JSON file")) {
            try MappingFile.load(path: binary.path)
        }
        let directory = dir.path + "/sub.json"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(throws: MappingFileError(file: directory, location: "", problem: "a directory, not a regular file; allowed: a regular file")) {
            try MappingFile.load(path: directory)
        }
        // NUL in the middle of a file on disk: refused with its line, not cut short.
        let nul = dir.appendingPathComponent("nul.toml")
        try Data("[drive]\nspeed = 64\n\u{0}[drive.left]\naddress = 99\n".utf8).write(to: nul)
        #expect(throws: MappingFileError(file: nul.path, location: "", problem: "a NUL byte at offset 19 (line 3); allowed: text without NUL bytes")) {
            try MappingFile.load(path: nul.path)
        }
        // A FIFO is refused before open(2), which would block until a writer appears. The call
        // returns (this test would hang before the fix).
        let fifo = dir.appendingPathComponent("x.toml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: MappingFileError(file: fifo, location: "", problem: "a FIFO, not a regular file; allowed: a regular file")) {
            try MappingFile.load(path: fifo)
        }
    }
}
