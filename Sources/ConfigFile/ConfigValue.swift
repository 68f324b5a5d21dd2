import TOMLKit

/// A parsed configuration document, whatever its syntax: TOML and JSON both become this tree,
/// so one validator gives the same messages for both.
package indirect enum ConfigValue: Sendable {
    /// Keys sorted, so that "the first problem" is the same on every run and in both formats.
    case table([(key: String, value: ConfigValue)])
    case array([ConfigValue])
    case integer(Int)
    case float(Double)
    case bool(Bool)
    case string(String)
    /// A TOML date/time or a JSON null: never valid in a mapping; the text names the kind.
    case other(String)

    /// The kind as a person reads it in an error message.
    package var kind: String {
        switch self {
        case .table: "a table"
        case .array: "an array"
        case .integer(let v): "the integer \(v)"
        case .float(let v): "the number \(v)"
        case .bool(let v): "\(v)"
        case .string(let s): "the string \"\(s)\""
        case .other(let k): k
        }
    }
}

/// Where a syntax error is, and what it is.
package struct ConfigSyntaxError: Error, Sendable {
    package let line: Int?
    package let message: String
}

extension ConfigValue {
    package static func parseTOML(_ text: String) throws(ConfigSyntaxError) -> ConfigValue {
        if let problem = TOMLPreflight.problem(in: text) {
            throw ConfigSyntaxError(line: nil, message: problem)
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigSyntaxError(line: error.source.begin.line, message: "TOML syntax error: \(error.description)")
        } catch {
            throw ConfigSyntaxError(line: nil, message: "TOML syntax error: \(error)")
        }
        return convert(table)
    }

    private static func convert(_ table: TOMLTable) -> ConfigValue {
        var entries: [(key: String, value: ConfigValue)] = []
        for key in table.keys.sorted() {
            if let value = table[key] { entries.append((key, convert(value))) }
        }
        return .table(entries)
    }

    private static func convert(_ value: any TOMLValueConvertible) -> ConfigValue {
        switch value.type {
        case .table: return value.table.map(convert) ?? .other("a table")
        case .array: return .array(value.array.map { $0.map(convert) } ?? [])
        case .int: return value.int.map(ConfigValue.integer) ?? .other("an integer")
        case .double: return value.double.map(ConfigValue.float) ?? .other("a number")
        case .bool: return value.bool.map(ConfigValue.bool) ?? .other("a boolean")
        case .string: return value.string.map(ConfigValue.string) ?? .other("a string")
        case .date: return .other("a date")
        case .time: return .other("a time")
        case .dateTime: return .other("a date-time")
        }
    }

    package static func parseJSON(_ text: String) throws(ConfigSyntaxError) -> ConfigValue {
        try StrictJSON.parse(text)
    }
}
