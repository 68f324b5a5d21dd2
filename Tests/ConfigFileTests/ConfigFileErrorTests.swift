import ConfigFile
import TOMLKit
import Testing

@Suite struct ConfigFileErrorTests {
    /// One error type, two ways of naming the place: a document's dotted key, a command's option.
    @Test func aDocumentAndACommandConfigNameTheirKeyTheirOwnWay() {
        #expect("\(ConfigFileError(file: "kit.toml", key: "drive.speed", problem: "got the integer 200; allowed: an integer 0…127"))"
                == "kit.toml: drive.speed: got the integer 200; allowed: an integer 0…127")
        #expect("\(ConfigFileError(file: "kit.toml", key: nil, problem: "line 2: TOML syntax error"))" == "kit.toml: line 2: TOML syntax error")
        #expect("\(ConfigFileError(file: "/etc/receive.toml", key: "prot", problem: "unknown key", naming: .commandConfig))"
                == "config /etc/receive.toml: key \"prot\": unknown key")
        #expect("\(ConfigFileError(file: "/etc/receive.toml", key: "", problem: "cannot read it", naming: .commandConfig))"
                == "config /etc/receive.toml: cannot read it")
    }

    @Test func tomlIsParsedAfterThePreflightAndItsErrorsNameTheLine() throws {
        #expect(throws: ConfigFileError(file: "pad.toml", key: nil, problem: "line 1: a table header must start with a key name or a quoted key, e.g. [drive] (not valid TOML)")) {
            try TOMLDocument.parse("[?x]\n", file: "pad.toml")
        }
        let table = try TOMLDocument.parse("a = [1, 2]\nb = \"x\"\nc = 0.5\n", file: "t.toml")
        #expect(table["b"].map(TOMLDocument.show) == "\"x\"")
        #expect(table["c"].flatMap(TOMLDocument.number) == 0.5)
        #expect(table["b"].flatMap(TOMLDocument.number) == nil)
    }

    @Test func jsonAndTomlBecomeOneTree() throws {
        guard case .table(let json) = try ConfigValue.parseJSON(#"{"b": 1, "a": true}"#),
              case .table(let toml) = try ConfigValue.parseTOML("b = 1\na = true\n") else {
            Issue.record("not tables")
            return
        }
        #expect(json.map(\.key) == ["a", "b"])
        #expect(toml.map(\.key) == ["a", "b"])
        #expect(json.map(\.value.kind) == toml.map(\.value.kind))
        #expect(throws: ConfigSyntaxError.self) { try ConfigValue.parseJSON(#"{"a": 1,}"#) }
    }
}
