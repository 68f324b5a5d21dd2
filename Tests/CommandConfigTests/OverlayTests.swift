import ArgumentParser
import CommandConfig
import ConfigFile
import Foundation
import Testing

/// A command shaped like `receive`: values, an enum, an optional, a flag, a repeatable option.
private struct Sample: ParsableCommand {
    enum Mode: String, ExpressibleByArgument, CaseIterable { case first, any }
    @Option var port: UInt16 = 0
    @Option var failsafeMs: Int = 250
    @Option var accept: Mode = .first
    @Option var name: String?
    @Option var peer: [String] = []
    @Flag var noAdvertise = false
    @Option var config: String?
}

private let keys = OptionKeys.of(Sample.self)

/// A temporary file holding `text`, removed by the caller.
private func file(_ text: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-\(UUID().uuidString).toml").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

@Suite struct OverlayTests {
    @Test func keysAreTheLongOptionNames() {
        #expect(Set(keys.keys) == ["port", "failsafe-ms", "accept", "name", "peer", "no-advertise", "config"])
        #expect(keys["peer"]?.kind == .repeated)
        #expect(keys["no-advertise"]?.kind == .flag)
        #expect(keys["accept"]?.choices == ["first", "any"])
    }

    @Test func fileValuesApplyAndTypedFlagsOverrideThem() throws {
        let path = try file("""
            port = 5000
            failsafe-ms = 300
            accept = "any"
            peer = ["a:1", "b:2"]
            no-advertise = true
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try ConfigOverlay.resolve(["--config", path], keys: keys, defaultFile: nil)
        let a = try Sample.parse(fromFile.arguments)
        #expect(a.port == 5000 && a.failsafeMs == 300 && a.accept == .any && a.peer == ["a:1", "b:2"] && a.noAdvertise)

        let typed = ["--config", path, "--failsafe-ms", "400", "--accept=first"]
        let overridden = try Sample.parse(try ConfigOverlay.resolve(typed, keys: keys, defaultFile: nil).arguments)
        #expect(overridden.failsafeMs == 400)
        #expect(overridden.accept == .first)
        #expect(overridden.port == 5000)
    }

    @Test func theDefaultFileIsReadOnlyWhenItExists() throws {
        let path = try file("port = 7000\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let used = try ConfigOverlay.resolve(["--port", "8000"], keys: keys, defaultFile: path)
        #expect(used.file == path)
        #expect(used.arguments == ["--port=7000", "--config=\(path)", "--port", "8000"])
        #expect(try Sample.parse(used.arguments).port == 8000)

        let missing = try ConfigOverlay.resolve(["--port", "8000"], keys: keys, defaultFile: path + ".absent")
        #expect(missing.file == nil)
        #expect(missing.arguments == ["--port", "8000"])
    }

    @Test func aGivenFileMustExist() {
        #expect(throws: ConfigFileError.self) {
            try ConfigOverlay.resolve(["--config=/nonexistent/receive.toml"], keys: keys, defaultFile: nil)
        }
    }

    @Test(arguments: [
        ("prot = 1", "prot", "unknown key"),
        ("failsafe_ms = 1", "failsafe_ms", "write it with dashes: failsafe-ms"),
        ("accept = \"all\"", "accept", "allowed: first, any"),
        ("port = 70000", "port", "is not a valid value"),
        ("no-advertise = \"yes\"", "no-advertise", "allowed: true or false"),
        ("peer = \"a:1\"", "peer", "allowed: an array"),
        ("config = \"x.toml\"", "config", "unknown key"),
        ("[gamepad]\ndeadzone = 0.1", "gamepad", "unknown key"),
    ])
    func aBadKeyNamesTheFileAndTheKey(text: String, key: String, problem: String) throws {
        let path = try file(text + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try ConfigOverlay.resolve(["--config", path], keys: keys, defaultFile: nil)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == path)
            #expect(error.key == key)
            #expect(error.description.contains(problem), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func allowedTablesAreLeftToTheirReader() throws {
        let path = try file("port = 1\n[gamepad]\ndeadzone = 0.1\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let used = try ConfigOverlay.resolve([], keys: keys, defaultFile: path, tables: ["gamepad"])
        #expect(used.fileArguments == ["--port=1"])
    }

    @Test func aSyntaxErrorNamesTheLine() throws {
        let path = try file("port = 1\nname = \"unterminated\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try ConfigOverlay.resolve(["--config", path], keys: keys, defaultFile: nil)
        } throws: { error in
            "\(error)".contains("line 2")
        }
    }

    @Test func parserMessagesAboutFileValuesBlameTheFile() throws {
        let path = try file("failsafe-ms = 9\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let used = try ConfigOverlay.resolve(["--config", path], keys: keys, defaultFile: nil)
        #expect(used.blames("--failsafe-ms 9 is out of range", typed: ["--config", path]) == "failsafe-ms")
        #expect(used.blames("--failsafe-ms 9 is out of range", typed: ["--config", path, "--failsafe-ms", "9"]) == nil)
    }
}

/// A command that takes a few settings of `Sample`'s file (as `rest` takes receive's board).
private struct Narrow: ParsableCommand {
    @Option var name: String?
    @Option var port: UInt16 = 0
    @Option var config: String?
}

@Suite struct KeepingTests {
    @Test func onlyTheKeptKeysOfTheFileReachTheParserAndTypedOnesStillWin() throws {
        let path = try file("""
            port = 5000
            name = "robot-7"
            peer = ["a:1"]
            no-advertise = true
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Checked whole (with Sample's keys), then narrowed: Narrow would refuse --peer and --no-advertise.
        let overlay = try ConfigOverlay.resolve(["--config", path, "--port", "6000"], keys: keys, defaultFile: nil)
            .keeping(["name", "port"])
        #expect(overlay.fileKeys.sorted() == ["name", "port"])
        #expect(overlay.fileArguments == ["--name=robot-7", "--port=5000"])
        let n = try Narrow.parse(overlay.arguments)
        #expect(n.name == "robot-7" && n.port == 6000 && n.config == path)
    }

    @Test func aDefaultFileKeepsItsConfigArgumentAndNoFileChangesNothing() throws {
        let path = try file("name = \"x\"\nno-advertise = true\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let overlay = try ConfigOverlay.resolve([], keys: keys, defaultFile: path).keeping(["name"])
        #expect(overlay.arguments == ["--name=x", "--config=\(path)"])
        let none = try ConfigOverlay.resolve(["--name", "y"], keys: keys, defaultFile: nil)
        #expect(none.keeping(["port"]) == none)
    }

    @Test func aKeyTheWholeFileMayNotHaveIsStillRefused() throws {
        let path = try file("nmae = \"x\"\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ConfigFileError.self) { try ConfigOverlay.resolve(["--config", path], keys: keys, defaultFile: nil).keeping(["name"]) }
    }
}
