import TOMLKit

/// TOML text to a table, and the values in it as an error message shows them: the one TOML
/// reading of the gamepad and MIDI tables (the mapping file goes through ``ConfigValue``).
package enum TOMLDocument {
    /// Parses `text` after ``TOMLPreflight``; a problem is ``ConfigFileError`` for the whole
    /// `file`: `line L, column C: WHAT (not valid TOML)`.
    package static func parse(_ text: String, file: String) throws(ConfigFileError) -> TOMLTable {
        if let problem = TOMLPreflight.problem(in: text) {
            throw ConfigFileError(file: file, key: nil, problem: problem)
        }
        do {
            return try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigFileError(file: file, key: nil,
                                  problem: "line \(error.source.begin.line), column \(error.source.begin.column): \(error.description) (not valid TOML)")
        } catch {
            throw ConfigFileError(file: file, key: nil, problem: "not valid TOML: \(error)")
        }
    }

    /// A value as written in TOML, for "X is not allowed": `"text"`, `2`, `[ 1, 2 ]`.
    package static func show(_ value: any TOMLValueConvertible) -> String {
        if let s = value.string { return "\"\(s)\"" }
        let text = "\(value.tomlValue)"
        return String(text.drop { $0 == " " || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\n" }.reversed())
    }

    /// An integer or a finite float as a number; nil for anything else.
    package static func number(_ value: any TOMLValueConvertible) -> Double? {
        if let d = value.double { return d.isFinite ? d : nil }
        return value.int.map(Double.init)
    }
}
