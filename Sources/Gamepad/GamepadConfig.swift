#if canImport(Glibc)
import Glibc
#endif
import ConfigFile
import RemoteWire
import SystemIO
import TOMLKit

/// The `[gamepad]` part of a controller config file (`--config FILE`, TOML). Every top-level
/// table must be one of ``knownTables`` and every key inside `[gamepad]` must be known, so a typo
/// (`[gamepd]`) is an error naming it rather than a silently ignored setting. Top-level plain keys
/// are `control`'s options (control.toml), checked by its config overlay, not here.
///
/// ```toml
/// [gamepad]
/// steer_axis = "leftx"      # leftx, lefty, rightx, righty
/// invert_steer = false
/// full_lock = 0.7853982     # radians at full deflection, 0 < x ≤ 1.5707964 (π/2)
/// deadzone = 0.05           # 0 ≤ x < 1
/// expo = 0.0                # 0 ≤ x ≤ 1
/// threshold = 0.5           # triggers/sticks bound to bits count past this, 0 < x < 1
/// enable = "leftshoulder"   # deadman; "" or absent = none
/// stop = "guide"            # stop latch; "" or absent = none
/// mappings = ["03000000…,My Pad,a:b0,b:b1,…"]   # extra SDL mapping lines
///
/// [gamepad.buttons]         # packet bit = control or [controls]; [] = never set
/// forward = ["dpup", "righttrigger"]
/// a = "south"
/// ```
package struct GamepadConfig: Hashable, Sendable {
    package var mapping: GamepadMapping
    /// SDL GameController mapping lines added before any pad is opened.
    package var sdlMappings: [String]
    /// The file it came from, for error messages ("" = built-in defaults).
    package var file: String

    package init(mapping: GamepadMapping = .standard, sdlMappings: [String] = [], file: String = "") {
        self.mapping = mapping
        self.sdlMappings = sdlMappings
        self.file = file
    }

    /// Reads and parses `path`.
    package static func load(path: String) throws(GamepadConfigError) -> GamepadConfig {
        let text: String
        do {
            text = try readFile(path)
        } catch {
            throw GamepadConfigError(file: path, key: nil, problem: error.problem(allowedText: "a UTF-8 TOML file"))
        }
        return try parse(text, file: path)
    }

    /// The top-level tables a controller config file may have. Another part of the controller
    /// that reads its own table from the same file adds its name here.
    package static let knownTables: Set<String> = ["gamepad", "midi"]

    package static func parse(_ text: String, file: String) throws(GamepadConfigError) -> GamepadConfig {
        let named = file.isEmpty ? "gamepad config" : file
        if text.utf8.contains(0) {
            throw GamepadConfigError(file: named, key: nil, problem: "a NUL byte in the file; allowed: text without NUL bytes")
        }
        let root = try TOMLDocument.parse(text, file: named)
        var config = GamepadConfig(file: file)
        // Top-level plain keys are the command's own options (control.toml), checked by the command's
        // config overlay; every top-level *table* must be one this file may hold.
        for key in root.keys.sorted() where !knownTables.contains(key) && root[key]?.table != nil {
            let allowed = knownTables.sorted().map { "[\($0)]" }.joined(separator: ", ")
            throw GamepadConfigError(file: named, key: key,
                                     problem: "unknown key or table (allowed: \(allowed))\(Suggestion.hint(for: key, among: knownTables))")
        }
        guard let value = root["gamepad"] else { return config }
        guard let table = value.table else {
            throw GamepadConfigError(file: named, key: "gamepad", problem: "must be a table ([gamepad])")
        }
        let reader = Reader(file: file)
        for key in table.keys.sorted() {
            guard let value = table[key] else { continue }
            try reader.apply(key: key, value: value, to: &config)
        }
        return config
    }

    static func readFile(_ path: String) throws(ConfigReadError) -> String {
        try ConfigFileReader.read(path)
    }

}

/// A gamepad table that cannot be used: which file, which key, what is allowed. One line.
package typealias GamepadConfigError = ConfigFileError

/// Key by key; each setter names the key and what it allows.
private struct Reader {
    let file: String

    static let topKeys = ["buttons", "deadzone", "enable", "expo", "full_lock", "invert_steer",
                          "mappings", "steer_axis", "stop", "threshold"]

    func fail(_ key: String, _ problem: String) -> GamepadConfigError {
        GamepadConfigError(file: file.isEmpty ? "gamepad config" : file, key: key, problem: problem)
    }

    func apply(key: String, value: any TOMLValueConvertible, to config: inout GamepadConfig) throws(GamepadConfigError) {
        let path = "gamepad." + key
        switch key {
        case "steer_axis":
            let allowed = PadAxis.allCases.filter { !$0.isTrigger }
            guard let text = value.string, let axis = allowed.first(where: { $0.name == text.lowercased() }) else {
                throw fail(path, "\(show(value)) is not allowed (allowed: \(allowed.map(\.name).joined(separator: ", ")))")
            }
            config.mapping.steerAxis = axis
        case "invert_steer":
            guard let flag = value.bool else { throw fail(path, "\(show(value)) is not allowed (allowed: true or false)") }
            config.mapping.invertSteer = flag
        case "full_lock":
            // Compared as Float: 1.5707964 and Double.pi / 2 both mean the wire's π/2.
            guard let x = number(value), x > 0, Float(x) <= ControllerState.maxAngle else {
                throw fail(path, "\(show(value)) is not allowed (allowed: radians, more than 0 and at most π/2 = \(ControllerState.maxAngle))")
            }
            config.mapping.fullLockAngle = Float(x)
        case "deadzone":
            guard let x = number(value), x >= 0, x < 1 else {
                throw fail(path, "\(show(value)) is not allowed (allowed: a number from 0 up to, not including, 1)")
            }
            config.mapping.deadzone = x
        case "expo":
            guard let x = number(value), x >= 0, x <= 1 else {
                throw fail(path, "\(show(value)) is not allowed (allowed: a number from 0 to 1)")
            }
            config.mapping.expo = x
        case "threshold":
            guard let x = number(value), x > 0, x < 1 else {
                throw fail(path, "\(show(value)) is not allowed (allowed: a number between 0 and 1, both excluded)")
            }
            config.mapping.threshold = x
        case "enable", "stop":
            guard let text = value.string else { throw fail(path, "\(show(value)) is not allowed (allowed: a control name, or \"\" for none)") }
            let source: PadControl?
            if text.isEmpty {
                source = nil
            } else {
                guard let s = PadControl(name: text) else { throw fail(path, unknownControl(text)) }
                source = s
            }
            if key == "enable" { config.mapping.enable = source } else { config.mapping.stop = source }
        case "mappings":
            guard let array = value.array else {
                throw fail(path, "\(show(value)) is not allowed (allowed: an array of SDL mapping strings)")
            }
            var lines: [String] = []
            for (i, element) in array.enumerated() {
                guard let text = element.string, let line = SDLMappingLine.normalized(text) else {
                    throw fail("\(path)[\(i)]", "\(show(element)) is not allowed (allowed: an SDL mapping line \"GUID,name,a:b0,…\" with a 32-hex-digit GUID)")
                }
                lines.append(line)
            }
            config.sdlMappings = lines
        case "buttons":
            guard let table = value.table else { throw fail(path, "must be a table ([gamepad.buttons])") }
            for bitName in table.keys.sorted() {
                guard let entry = Buttons.names.first(where: { $0.name == bitName }) else {
                    throw fail("\(path).\(bitName)", "not a packet bit (allowed: \(Buttons.names.map(\.name).joined(separator: ", ")))\(Suggestion.hint(for: bitName, among: Buttons.names.map(\.name)))")
                }
                guard let element = table[bitName] else { continue }
                let sources = try controls(element, key: "\(path).\(bitName)")
                config.mapping.bindings.removeAll { $0.bit == entry.button }
                config.mapping.bindings.append(.init(entry.button, sources))
            }
            let order = Buttons.names.map(\.button.rawValue)
            config.mapping.bindings.sort { order.firstIndex(of: $0.bit.rawValue)! < order.firstIndex(of: $1.bit.rawValue)! }
        default:
            throw fail(path, "unknown key (allowed: \(Self.topKeys.joined(separator: ", ")))\(Suggestion.hint(for: key, among: Self.topKeys))")
        }
    }

    func controls(_ value: any TOMLValueConvertible, key: String) throws(GamepadConfigError) -> [PadControl] {
        if let text = value.string {
            if text.isEmpty { return [] }
            guard let s = PadControl(name: text) else { throw fail(key, unknownControl(text)) }
            return [s]
        }
        guard let array = value.array else {
            throw fail(key, "\(show(value)) is not allowed (allowed: a control name or an array of them)")
        }
        var out: [PadControl] = []
        for (i, element) in array.enumerated() {
            guard let text = element.string, let s = PadControl(name: text) else {
                throw fail("\(key)[\(i)]", unknownControl(element.string ?? show(element)))
            }
            out.append(s)
        }
        return out
    }

    func unknownControl(_ text: String) -> String {
        "\"\(text)\" is not a control (allowed: \(PadControl.allNames.joined(separator: ", ")))"
    }

    func number(_ value: any TOMLValueConvertible) -> Double? { TOMLDocument.number(value) }
    func show(_ value: any TOMLValueConvertible) -> String { TOMLDocument.show(value) }
}

/// SDL GameController mapping lines (`GUID,name,a:b0,b:b1,…`), checked before SDL sees them.
package enum SDLMappingLine {
    /// The line, checked and normalized; nil if it is not a mapping line.
    ///
    /// Trap (SDL 2.26): a device GUID carries a checksum of the device name in bytes 2–3
    /// (hex digits 4–7), and a mapping whose GUID has a non-zero checksum there (and no `crc:`
    /// field) never matches. A GUID copied from `analog-remote gamepads` has it, so it is cleared
    /// here; the mapping then applies to every device with that bus, vendor, product and version.
    package static func normalized(_ line: String) -> String? {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count >= 3 else { return nil }
        let guid = fields[0]
        guard guid == "xinput" || (guid.count == 32 && guid.allSatisfy(\.isHexDigit)) else { return nil }
        guard fields[1].contains(where: { $0 != " " }) else { return nil }
        for field in fields.dropFirst(2) where !field.isEmpty && !field.contains(":") { return nil }
        guard guid != "xinput", !fields.contains(where: { $0.hasPrefix("crc:") }) else { return line }
        let cleared = guid.prefix(4) + "0000" + guid.dropFirst(8)
        return ([Substring(cleared)] + fields.dropFirst()).joined(separator: ",")
    }
}
