import DriveRecord

/// A strict JSON (RFC 8259) reader for mapping files, into ``ConfigValue``: the project's one
/// strict reader (``RecordJSON``, which also reads recordings), its values converted, keys
/// sorted (so that "the first problem" is the same in both formats) and the problem placed on
/// its line.
enum StrictJSON {
    /// Nesting limit, so a file of `[[[[…` cannot exhaust the stack.
    static let maxDepth = 64

    static func parse(_ text: String) throws(ConfigSyntaxError) -> ConfigValue {
        switch RecordJSON.parse(Array(text.utf8), maximumDepth: maxDepth) {
        case .success(let value): return convert(value)
        case .failure(let e): throw ConfigSyntaxError(line: e.line, message: "JSON syntax error: \(e.reason)")
        }
    }

    static func convert(_ value: RecordJSON) -> ConfigValue {
        switch value {
        case .null: .other("null")
        case .bool(let b): .bool(b)
        case .integer(let i): .integer(i)
        case .number(let d): .float(d)
        case .string(let s): .string(s)
        case .array(let items): .array(items.map(convert))
        case .object(let members): .table(members.map { ($0.key, convert($0.value)) }.sorted { $0.key < $1.key })
        }
    }
}
