import ConfigFile
import Testing

/// TOMLKit 0.6.0 aborts the process on these shapes instead of throwing; every TOML reader asks
/// TOMLPreflight first, so a user's typo is one line and exit 2, never a crash.
@Suite struct TOMLPreflightTests {
    @Test("headers TOMLKit would abort on are refused with their line", arguments: [
        ("[?x]\n", 1), ("a = 1\n[.a]\n", 2), ("[+]", 1), ("x = 1\n\n  [\n", 3), ("[[\n", 1), ("[é]\n", 1), ("[[ ?a]]\n", 1),
        ("\u{FEFF}[\u{FFFD},\n1,\n1\n", 1), ("\u{FEFF}[?x]\n", 1),
    ])
    func badHeaders(_ text: String, line: Int) {
        #expect(TOMLPreflight.problem(in: text)?.hasPrefix("line \(line): a table header must start with a key name") == true)
    }

    @Test("a } where an array element belongs is refused with its line", arguments: [
        ("x = [}\n", 1), ("a = 1\nx = [1,}\n", 2), ("x = [\n  # c\n  }\n", 3),
    ])
    func braceInArray(_ text: String, line: Int) {
        #expect(TOMLPreflight.problem(in: text) == "line \(line): a } where an array element belongs (not valid TOML)")
    }

    @Test("ordinary TOML passes, also braces and brackets inside strings and comments", arguments: [
        "[drive]\nspeed = 64\n", "[gamepad.buttons]\nforward = [\"dpup\", \"righttrigger\"]\n",
        "\u{FEFF}[drive]\nspeed = 64\n", "[\"quoted key\"]\na = \"[}\"\n", "x = { a = [1, 2] }  # [} here is a comment\n", "[[midi.pads]]\nnote = 36\n", "",
    ])
    func ordinary(_ text: String) {
        #expect(TOMLPreflight.problem(in: text) == nil)
    }
}
