#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ConfigFile
import SystemIO
import TOMLKit

/// A command's config file laid under its command line: every key of the file becomes the
/// option of the same name, placed *before* the arguments that were typed, so a flag on the
/// command line overrides the file (ArgumentParser keeps the last value of an option).
///
/// ```toml
/// # /etc/analog-remote/receive.toml            →  receive --board=serial:/dev/programland
/// board = "serial:/dev/programland"            #          --failsafe-ms=300 --no-advertise
/// failsafe-ms = 300                            #          --config=/etc/…/receive.toml  <typed arguments>
/// no-advertise = true
/// ```
///
/// Contract:
/// - `--config FILE` (or `--config=FILE`) among the typed arguments names the file; it must
///   exist. Without it the command's default file is used when it exists, and nothing happens
///   when it does not.
/// - Keys are the long option names (`failsafe-ms`, not `failsafe_ms`). A flag is `true` (given)
///   or `false` (not given); a repeatable option takes an array. `config`, `help`, `version`
///   are not keys.
/// - Unknown keys, tables other than `tables`, wrong types and values the option would refuse
///   are a ``ConfigFileError`` naming the file and the key: nothing is run.
/// - Traps: a boolean flag set in the file cannot be turned off on the command line (there is no
///   `--no-…` form); comment it out instead. Values are passed as `--key=value`, so a value that
///   starts with `-` is not mistaken for an option.
package struct ConfigOverlay: Sendable, Equatable {
    /// The file that was read, or nil (no `--config`, no default file).
    package let file: String?
    /// The arguments taken from the file (what ``arguments`` starts with).
    package let fileArguments: [String]
    /// The keys the file set, e.g. `["board", "failsafe-ms"]`, for error messages.
    package let fileKeys: [String]
    /// The whole argument list to parse: the file's, then `--config=FILE` when it was the
    /// default, then the typed ones.
    package let arguments: [String]

    package static let maximumSize = 1 << 20

    /// Lays the config file under `typed` (the arguments after the subcommand's name).
    /// `tables`: top-level tables read elsewhere (control's `[gamepad]`), allowed and skipped.
    package static func resolve(_ typed: [String], keys: [String: OptionKey], defaultFile: String?,
                               tables: Set<String> = []) throws(ConfigFileError) -> ConfigOverlay {
        let given = configArgument(typed)
        guard let path = given ?? defaultFile.flatMap({ exists($0) ? $0 : nil }) else {
            return ConfigOverlay(file: nil, fileArguments: [], fileKeys: [], arguments: typed)
        }
        let text = try load(path)
        if let problem = TOMLPreflight.problem(in: text) {
            throw ConfigFileError.command(file: path, key: "", problem: problem)
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigFileError.command(file: path, key: "", problem: "line \(error.source.begin.line): TOML syntax error: \(error.description)")
        } catch {
            throw ConfigFileError.command(file: path, key: "", problem: "TOML syntax error: \(error)")
        }
        var out: [String] = []
        var used: [String] = []
        for name in table.keys.sorted() {
            guard let value = table[name] else { continue }
            if tables.contains(name) {
                guard value.table != nil else {
                    throw ConfigFileError.command(file: path, key: name, problem: "must be a table ([\(name)])")
                }
                continue
            }
            guard let key = keys[name], !["config", "help", "version"].contains(name) else {
                throw ConfigFileError.command(file: path, key: name, problem: unknown(name, keys: keys, tables: tables))
            }
            out += try arguments(for: key, value, file: path)
            used.append(name)
        }
        let configArgs = given == nil ? ["--config=\(path)"] : []
        return ConfigOverlay(file: path, fileArguments: out, fileKeys: used, arguments: out + configArgs + typed)
    }

    /// The same overlay with only the file's keys in `names` (a command that reads another
    /// command's file for a few of its settings: `rest` takes `board`, `profile` and `map` of
    /// `receive`'s). The file has been checked whole by then.
    package func keeping(_ names: Set<String>) -> ConfigOverlay {
        guard file != nil else { return self }
        let kept = fileArguments.filter { argument in
            let name = argument.dropFirst(2).split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return names.contains(name)
        }
        let rest = Array(arguments.dropFirst(fileArguments.count))
        return ConfigOverlay(file: file, fileArguments: kept, fileKeys: fileKeys.filter(names.contains), arguments: kept + rest)
    }

    /// The value of `--config FILE` / `--config=FILE` before a `--`, if any.
    package static func configArgument(_ typed: [String]) -> String? {
        var i = 0
        var found: String?
        while i < typed.count {
            let a = typed[i]
            if a == "--" { break }
            if a == "--config", i + 1 < typed.count {
                found = typed[i + 1]
                i += 2
                continue
            }
            if a.hasPrefix("--config=") { found = String(a.dropFirst("--config=".count)) }
            i += 1
        }
        return found
    }

    /// Whether an option named in a parser message (`--failsafe-ms …`) came from the file and was
    /// not typed: then the message is about the file.
    package func blames(_ message: String, typed: [String]) -> String? {
        for key in fileKeys where message.contains("--\(key)") {
            let typedIt = typed.contains { $0 == "--\(key)" || $0.hasPrefix("--\(key)=") }
            if !typedIt { return key }
        }
        return nil
    }

    private static func arguments(for key: OptionKey, _ value: any TOMLValueConvertible, file: String) throws(ConfigFileError) -> [String] {
        switch key.kind {
        case .flag:
            guard let b = value.bool else {
                throw ConfigFileError.command(file: file, key: key.name, problem: "got \(describe(value)); allowed: true or false")
            }
            return b ? ["--\(key.name)"] : []
        case .value:
            return ["--\(key.name)=\(try text(of: value, key: key, file: file))"]
        case .repeated:
            guard let array = value.array else {
                throw ConfigFileError.command(file: file, key: key.name, problem: "got \(describe(value)); allowed: an array, e.g. [\"…\", \"…\"]")
            }
            var out: [String] = []
            for element in array { out.append("--\(key.name)=\(try text(of: element, key: key, file: file))") }
            return out
        }
    }

    private static func text(of value: any TOMLValueConvertible, key: OptionKey, file: String) throws(ConfigFileError) -> String {
        let text: String
        switch value.type {
        case .string: text = value.string ?? ""
        case .int: text = value.int.map { "\($0)" } ?? ""
        case .double: text = value.double.map { "\($0)" } ?? ""
        case .bool: text = value.bool.map { "\($0)" } ?? ""
        default:
            throw ConfigFileError.command(file: file, key: key.name, problem: "got \(describe(value)); allowed: a string or a number")
        }
        guard key.accepts(text) else {
            let allowed = key.choices.isEmpty ? "" : "; allowed: \(key.choices.joined(separator: ", "))"
            throw ConfigFileError.command(file: file, key: key.name, problem: "\(describe(value)) is not a valid value\(allowed)")
        }
        return text
    }

    private static func describe(_ value: any TOMLValueConvertible) -> String {
        switch value.type {
        case .string: "the string \"\(value.string ?? "")\""
        case .int: "the integer \(value.int ?? 0)"
        case .double: "the number \(value.double ?? 0)"
        case .bool: "\(value.bool ?? false)"
        case .table: "a table"
        case .array: "an array"
        default: "a date or time"
        }
    }

    private static func unknown(_ name: String, keys: [String: OptionKey], tables: Set<String>) -> String {
        var known = keys.keys.filter { !["config", "help", "version"].contains($0) }.sorted()
        known += tables.sorted().map { "[\($0)]" }
        let dashed = String(name.map { $0 == "_" ? "-" : $0 })
        let hint = dashed != name && keys[dashed] != nil ? " (write it with dashes: \(dashed))" : ""
        return "unknown key\(hint); known: \(known.joined(separator: ", "))"
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    private static func load(_ path: String) throws(ConfigFileError) -> String {
        var all: [UInt8] = []
        do {
            let fd = try Syscall.call("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
            let file = Descriptor(adopting: fd, label: path)
            while let chunk = try file.read(max: 65536), !chunk.isEmpty {
                all += chunk
                if all.count > maximumSize {
                    throw ConfigFileError.command(file: path, key: "", problem: "larger than 1 MiB; a config file is a few lines")
                }
            }
        } catch let error as SystemError {
            throw ConfigFileError.command(file: path, key: "", problem: "cannot read it: \(error.reason)")
        } catch let error as ConfigFileError {
            throw error
        } catch {
            throw ConfigFileError.command(file: path, key: "", problem: "cannot read it: \(error)")
        }
        return String(decoding: all, as: UTF8.self)
    }
}
