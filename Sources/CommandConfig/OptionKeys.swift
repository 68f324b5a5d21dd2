import ArgumentParser
import ConfigFile

/// What a config-file key stands for: one long option of a command, as ArgumentParser sees it.
package struct OptionKey: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// `--name VALUE` once (`@Option var name: T` or `T?`).
        case value
        /// `--name VALUE` once per array element (`@Option var name: [T]`).
        case repeated
        /// `--name` present or not (`@Flag var name: Bool`).
        case flag
    }

    /// The long name without dashes: `failsafe-ms`.
    package let name: String
    package let kind: Kind
    /// Checks one value's text the way ArgumentParser will (`ExpressibleByArgument.init(argument:)`);
    /// nil when the type cannot be checked here.
    let check: @Sendable (String) -> Bool?
    /// The allowed values of an enumerated option (`first`, `any`, `paired`), else empty.
    package let choices: [String]

    package static func == (a: OptionKey, b: OptionKey) -> Bool { a.name == b.name && a.kind == b.kind }
    package func hash(into hasher: inout Hasher) { hasher.combine(name); hasher.combine(kind) }

    /// Whether `text` is a valid value (true when it cannot be checked here: the parser decides).
    package func accepts(_ text: String) -> Bool { check(text) ?? true }
}

/// The long options of a command, found the way ArgumentParser finds them: by reflecting over a
/// default instance's property wrappers. `@OptionGroup`s are not entered (pass their types in
/// `groups`); options with a custom long name are not seen — `OptionKeysTests` pins every
/// command's key list against its help text, so such an option shows up there.
package enum OptionKeys {
    package static func of(_ type: any ParsableArguments.Type,
                          groups: [any ParsableArguments.Type] = []) -> [String: OptionKey] {
        var keys: [String: OptionKey] = [:]
        for t in [type] + groups {
            for child in Mirror(reflecting: t.init()).children {
                guard let label = child.label, label.hasPrefix("_") else { continue }
                let name = kebab(String(label.dropFirst()))
                guard let wrapper = child.value as? any ConfigurableWrapper, let key = wrapper.optionKey(name: name) else { continue }
                keys[name] = key
            }
        }
        return keys
    }

    /// `failsafeMs` → `failsafe-ms` (ArgumentParser's default long name).
    static func kebab(_ camel: String) -> String {
        var out = ""
        for c in camel {
            if c.isUppercase {
                if !out.isEmpty { out.append("-") }
                out.append(contentsOf: c.lowercased())
            } else {
                out.append(c)
            }
        }
        return out
    }
}

/// A property wrapper that can stand for a config key.
protocol ConfigurableWrapper {
    func optionKey(name: String) -> OptionKey?
}

extension Option: ConfigurableWrapper {
    func optionKey(name: String) -> OptionKey? {
        if let array = Value.self as? any ArrayOfArguments.Type {
            return OptionKey(name: name, kind: .repeated, check: array.elementCheck, choices: array.elementChoices)
        }
        let (check, choices) = argumentCheck(Value.self)
        return OptionKey(name: name, kind: .value, check: check, choices: choices)
    }
}

extension Flag: ConfigurableWrapper {
    func optionKey(name: String) -> OptionKey? {
        Value.self == Bool.self ? OptionKey(name: name, kind: .flag, check: { _ in nil }, choices: []) : nil
    }
}

/// `T` or `T?` with `T: ExpressibleByArgument`: how to check a value's text, and its choices.
private func argumentCheck(_ type: Any.Type) -> (@Sendable (String) -> Bool?, [String]) {
    if let t = type as? any ExpressibleByArgument.Type {
        return ({ t.init(argument: $0) != nil }, t.allValueStrings)
    }
    if let o = type as? any OptionalArgument.Type, let t = o.wrappedType as? any ExpressibleByArgument.Type {
        return ({ t.init(argument: $0) != nil }, t.allValueStrings)
    }
    return ({ _ in nil }, [])
}

private protocol OptionalArgument { static var wrappedType: Any.Type { get } }
extension Optional: OptionalArgument { static var wrappedType: Any.Type { Wrapped.self } }

private protocol ArrayOfArguments {
    static var elementCheck: @Sendable (String) -> Bool? { get }
    static var elementChoices: [String] { get }
}
extension Array: ArrayOfArguments {
    static var elementCheck: @Sendable (String) -> Bool? { argumentCheck(Element.self).0 }
    static var elementChoices: [String] { argumentCheck(Element.self).1 }
}

extension ConfigFileError {
    /// A problem in a command's config file (`config FILE: key "KEY": problem`); key "" for the whole file.
    package static func command(file: String, key: String, problem: String) -> ConfigFileError {
        ConfigFileError(file: file, key: key, problem: problem, naming: .commandConfig)
    }
}
