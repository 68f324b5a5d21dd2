import ConfigFile
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardProtocol
import RemoteWire
import SystemIO

/// A mapping file that cannot be used, said in one line: the file, the key (or line), what was
/// found and what is allowed, e.g.
/// `kit.toml: drive.speed: got the integer 200; allowed: an integer 0…127`.
package typealias MappingFileError = ConfigFileError

extension ConfigFileError {
    /// `location`: a dotted key (`drive.left.address`, `buttons[1].on`) or `line N`.
    package init(file: String, location: String, problem: String) {
        self.init(file: file, key: location, problem: problem)
    }
}

/// Reads `--map FILE` (TOML or JSON, chosen by the extension) into a ``Mapping``.
///
/// Keys (config-examples/stock-map.toml and config-examples/motors-map.toml document each): `profile`
/// (`"stock"` or `"motors"`), `drive.speed`, `drive.full_lock`, `drive.deadzone`, `drive.expo`,
/// `drive.left.address`, `drive.left.invert`, `drive.left.led`, the same for `drive.right`,
/// `buttons_byte`, and `buttons` — an array of tables with `button`, `address`, `on`, `off`. A
/// missing key keeps the profile's default; a missing `buttons` keeps its bindings,
/// `buttons = []` removes them. Unknown keys are errors (a typo must not silently fall back to
/// a default). Addresses must be inside the profile's map (0x00–0x21 stock, 0x00–0x23 motors).
package enum MappingFile {
    package static let maximumSize = 1 << 20

    /// The file's mapping for the profile it names, or for the motors profile.
    package static func load(path: String) throws(MappingFileError) -> Mapping {
        let document = try self.document(path: path)
        return try document.mapping(for: document.profile ?? .motors)
    }

    /// Reads and checks the file; the mapping itself depends on the profile (``MappingDocument``).
    package static func document(path: String) throws(MappingFileError) -> MappingDocument {
        let name = path
        let lowered = path.lowercased()
        let isJSON: Bool
        if lowered.hasSuffix(".toml") {
            isJSON = false
        } else if lowered.hasSuffix(".json") {
            isJSON = true
        } else {
            throw MappingFileError(file: name, location: "", problem: "unknown mapping file type; allowed: a .toml or .json file")
        }
        let text = try readText(path)
        return try parseDocument(text, json: isJSON, file: name)
    }

    /// Parses the text of a mapping file; `file` only names it in errors.
    package static func parse(_ text: String, json: Bool, file: String) throws(MappingFileError) -> Mapping {
        let document = try parseDocument(text, json: json, file: file)
        return try document.mapping(for: document.profile ?? .motors)
    }

    /// Parses the text of a mapping file and checks it against the profile it names (or, when it
    /// names none, the motors profile's map: the larger one).
    package static func parseDocument(_ text: String, json: Bool, file: String) throws(MappingFileError) -> MappingDocument {
        if let nul = text.utf8.firstIndex(of: 0) {
            let offset = text.utf8.distance(from: text.utf8.startIndex, to: nul)
            throw MappingFileError(file: file, location: "", problem: "a NUL byte at offset \(offset); allowed: text without NUL bytes")
        }
        let root: ConfigValue
        do {
            root = json ? try ConfigValue.parseJSON(text) : try ConfigValue.parseTOML(text)
        } catch {
            throw MappingFileError(file: file, location: error.line.map { "line \($0)" } ?? "", problem: error.message)
        }
        let profile = try Reader(file: file, profile: .motors, size: MemoryMapProfile.motors.size).profile(root)
        let document = MappingDocument(file: file, profile: profile, root: root)
        _ = try document.mapping(for: profile ?? .motors)
        return document
    }
}

/// A mapping file, read and checked: the profile it names, and its mapping for a profile.
package struct MappingDocument: Sendable {
    package let file: String
    /// `profile = "stock"` or `"motors"` in the file; nil when it names none (it then fits the
    /// board's profile, `--profile auto`).
    package let profile: BoardProfileKind?
    let root: ConfigValue

    /// The file's keys over `profile`'s defaults. Addresses are checked against the map of the
    /// profile the file names; a file that names none may use any address of the larger
    /// (motors) map, and the board link refuses a board that lacks one (``Mapping/firstMissing(onMapOf:)``).
    package func mapping(for profile: BoardProfileKind) throws(MappingFileError) -> Mapping {
        try Reader(file: file, profile: profile, size: self.profile == nil ? MemoryMapProfile.motors.size : profile.profile.size)
            .mapping(root)
    }

}

extension MappingFile {
    static func readText(_ path: String) throws(MappingFileError) -> String {
        do {
            return try ConfigFileReader.read(path, maximumSize: maximumSize)
        } catch {
            throw MappingFileError(file: path, location: "", problem: error.problem(what: "the mapping file", allowedText: "a UTF-8 TOML or JSON file"))
        }
    }
}

/// The validator: walks the tree, keeps the defaults for missing keys, and stops at the first
/// problem (keys in sorted order, so the same file always names the same problem).
private struct Reader {
    let file: String
    let profile: BoardProfileKind
    /// Addresses allowed: 0..<size.
    let size: Int
    static let topKeys = ["profile", "drive", "buttons", "buttons_byte"]
    static let driveKeys = ["speed", "full_lock", "deadzone", "expo", "left", "right"]
    static let motorKeys = ["address", "invert", "led"]
    static let buttonKeys = ["button", "address", "on", "off"]
    static let maxRun = 8

    func fail(_ key: String, _ problem: String) -> MappingFileError {
        MappingFileError(file: file, location: key, problem: problem)
    }

    func got(_ key: String, _ value: ConfigValue, allowed: String) -> MappingFileError {
        fail(key, "got \(value.kind); allowed: \(allowed)")
    }

    func table(_ value: ConfigValue, at key: String, allowedKeys: [String]) throws(MappingFileError) -> [String: ConfigValue] {
        guard case .table(let entries) = value else {
            throw got(key.isEmpty ? "(top level)" : key, value, allowed: "a table with keys \(allowedKeys.joined(separator: ", "))")
        }
        var out: [String: ConfigValue] = [:]
        for (k, v) in entries {
            guard allowedKeys.contains(k) else {
                throw fail(key.isEmpty ? k : "\(key).\(k)", "unknown key; allowed: \(allowedKeys.joined(separator: ", "))\(Suggestion.hint(for: k, among: allowedKeys))")
            }
            out[k] = v
        }
        return out
    }

    /// The `profile` key, if any.
    func profile(_ root: ConfigValue) throws(MappingFileError) -> BoardProfileKind? {
        let top = try table(root, at: "", allowedKeys: Self.topKeys)
        guard let value = top["profile"] else { return nil }
        let allowed = "\"stock\" (the published firmware, 34 bytes) or \"motors\" (motor bytes at 0x22/0x23)"
        guard case .string(let name) = value, let kind = BoardProfileKind(rawValue: name.lowercased()) else {
            throw got("profile", value, allowed: allowed)
        }
        return kind
    }

    func mapping(_ root: ConfigValue) throws(MappingFileError) -> Mapping {
        let top = try table(root, at: "", allowedKeys: Self.topKeys)
        var mapping = Mapping.default(for: profile)
        if let drive = top["drive"] { mapping.drive = try self.drive(drive, default: mapping.drive) }
        if let v = top["buttons_byte"] { mapping.buttonsByte = try optionalAddress(v, at: "buttons_byte") }
        try checkDriveAddresses(mapping)
        if let buttons = top["buttons"] { mapping.buttons = try self.buttons(buttons, mapping: mapping) }
        return mapping
    }

    /// The drive's addresses (signed bytes, LEDs, buttons byte) are all different.
    func checkDriveAddresses(_ mapping: Mapping) throws(MappingFileError) {
        var seen: [UInt8: String] = [:]
        let d = mapping.drive
        let uses: [(String, UInt8?)] = [("drive.left.address", d.left.address), ("drive.right.address", d.right.address),
                                        ("drive.left.led", d.left.led), ("drive.right.led", d.right.led),
                                        ("buttons_byte", mapping.buttonsByte)]
        for (key, address) in uses {
            guard let address else { continue }
            if let earlier = seen[address] {
                throw fail(key, "writes \(hex(address)), which is \(earlier); allowed: an address the drive does not use")
            }
            seen[address] = key
        }
    }

    func drive(_ value: ConfigValue, default base: DriveMapping) throws(MappingFileError) -> DriveMapping {
        let t = try table(value, at: "drive", allowedKeys: Self.driveKeys)
        var d = base
        if let v = t["speed"] { d.speed = try integer(v, at: "drive.speed", in: 0...127) }
        if let v = t["full_lock"] {
            let allowed = t["deadzone"] == nil
                ? "a number of radians above drive.deadzone (default \(d.deadzone)) and at most \(ControllerState.maxAngle) (pi/2)"
                : "a number of radians above 0 and at most \(ControllerState.maxAngle) (pi/2)"
            let x = try number(v, at: "drive.full_lock", allowed: allowed)
            let floor = t["deadzone"] == nil ? Double(d.deadzone) : 0
            guard x > floor, Float(x) <= ControllerState.maxAngle else { throw got("drive.full_lock", v, allowed: allowed) }
            d.fullLock = Float(x)
        }
        if let v = t["deadzone"] {
            let allowed = "a number of radians, at least 0 and below drive.full_lock (\(d.fullLock))"
            let x = try number(v, at: "drive.deadzone", allowed: allowed)
            guard x >= 0, Float(x) < d.fullLock else { throw got("drive.deadzone", v, allowed: allowed) }
            d.deadzone = Float(x)
        }
        if let v = t["expo"] {
            let x = try number(v, at: "drive.expo", allowed: "a number from 0 (linear) to 1 (cubic)")
            guard (0...1).contains(x) else { throw got("drive.expo", v, allowed: "a number from 0 (linear) to 1 (cubic)") }
            d.expo = Float(x)
        }
        if let v = t["left"] { d.left = try motor(v, at: "drive.left", default: d.left) }
        if let v = t["right"] { d.right = try motor(v, at: "drive.right", default: d.right) }
        if d.left.address == d.right.address {
            throw fail(t["right"] != nil ? "drive.right.address" : "drive.left.address",
                       "both motors are at \(hex(d.left.address)); allowed: two different addresses")
        }
        return d
    }

    /// An address, or `"none"` (nil).
    func optionalAddress(_ value: ConfigValue, at key: String) throws(MappingFileError) -> UInt8? {
        if case .string(let s) = value, s.lowercased() == "none" { return nil }
        return try address(value, at: key, run: 1, orNone: true)
    }

    func motor(_ value: ConfigValue, at key: String, default motor: DriveMapping.Motor) throws(MappingFileError) -> DriveMapping.Motor {
        let t = try table(value, at: key, allowedKeys: Self.motorKeys)
        var m = motor
        if let v = t["address"] { m.address = try address(v, at: "\(key).address", run: 1) }
        if let v = t["invert"] {
            guard case .bool(let b) = v else { throw got("\(key).invert", v, allowed: "true or false") }
            m.inverted = b
        }
        if let v = t["led"] { m.led = try optionalAddress(v, at: "\(key).led") }
        return m
    }

    func buttons(_ value: ConfigValue, mapping: Mapping) throws(MappingFileError) -> [ButtonBinding] {
        let drive = mapping.drive
        var driveUses: [(String, UInt8)] = [("drive.left.address", drive.left.address), ("drive.right.address", drive.right.address)]
        if let led = drive.left.led { driveUses.append(("drive.left.led", led)) }
        if let led = drive.right.led { driveUses.append(("drive.right.led", led)) }
        if let b = mapping.buttonsByte { driveUses.append(("buttons_byte", b)) }
        guard case .array(let items) = value else {
            throw got("buttons", value, allowed: "an array of tables ([[buttons]] in TOML)")
        }
        var out: [ButtonBinding] = []
        var released: [UInt8: (value: UInt8, by: Int)] = [:]
        for (index, item) in items.enumerated() {
            let key = "buttons[\(index)]"
            let t = try table(item, at: key, allowedKeys: Self.buttonKeys)
            guard let nameValue = t["button"] else { throw fail("\(key).button", "missing; allowed: \(buttonNames)") }
            guard case .string(let name) = nameValue, let entry = Buttons.names.first(where: { $0.name == name.lowercased() }) else {
                throw got("\(key).button", nameValue, allowed: buttonNames)
            }
            guard let onValue = t["on"] else { throw fail("\(key).on", "missing; allowed: \(byteRun)") }
            let on = try bytes(onValue, at: "\(key).on")
            var off = [UInt8](repeating: 0, count: on.count)
            if let offValue = t["off"] {
                off = try bytes(offValue, at: "\(key).off")
                guard off.count == on.count else {
                    throw fail("\(key).off", "has \(off.count) values but on has \(on.count); allowed: as many off values as on values")
                }
            }
            guard let addressValue = t["address"] else { throw fail("\(key).address", "missing; allowed: \(addressRange(run: on.count))") }
            let start = try address(addressValue, at: "\(key).address", run: on.count)
            for i in 0..<on.count {
                let a = start + UInt8(i)
                for (motorKey, used) in driveUses where used == a {
                    throw fail("\(key).address", "writes \(hex(a)), which is \(motorKey); allowed: an address the drive does not use")
                }
                if let earlier = released[a], earlier.value != off[i] {
                    throw fail("\(key).off", "releases \(hex(a)) to \(off[i]) but buttons[\(earlier.by)] releases it to \(earlier.value); allowed: the same off value for every binding of an address")
                }
                released[a] = (off[i], released[a]?.by ?? index)
            }
            out.append(ButtonBinding(button: entry.button, address: start, on: on, off: off))
        }
        return out
    }

    var buttonNames: String { "one of " + Buttons.names.map(\.name).joined(separator: ", ") }
    var byteRun: String { "an integer 0…255, or an array of 1…\(Self.maxRun) of them for consecutive addresses" }

    func addressRange(run: Int, orNone: Bool = false) -> String {
        "an address 0x00…\(hex(UInt8(size - run))) (an integer, or a string like \"0x0f\")"
            + (run > 1 ? " leaving room for \(run) values" : "") + (orNone ? ", or \"none\"" : "")
            + (size == MemoryMapProfile.stock.size && run == 1 ? " on the stock profile's 34-byte map" : "")
    }

    func integer(_ value: ConfigValue, at key: String, in range: ClosedRange<Int>) throws(MappingFileError) -> Int {
        let allowed = "an integer \(range.lowerBound)…\(range.upperBound)"
        guard case .integer(let v) = value, range.contains(v) else { throw got(key, value, allowed: allowed) }
        return v
    }

    func number(_ value: ConfigValue, at key: String, allowed: String) throws(MappingFileError) -> Double {
        switch value {
        case .integer(let v): return Double(v)
        case .float(let v) where v.isFinite: return v
        default: throw got(key, value, allowed: allowed)
        }
    }

    func address(_ value: ConfigValue, at key: String, run: Int, orNone: Bool = false) throws(MappingFileError) -> UInt8 {
        let allowed = addressRange(run: run, orNone: orNone)
        var number: Int?
        switch value {
        case .integer(let v): number = v
        case .string(let s):
            let lowered = s.lowercased()
            number = lowered.hasPrefix("0x") ? Int(lowered.dropFirst(2), radix: 16) : Int(lowered)
        default: break
        }
        guard let n = number, n >= 0, n + run <= size else {
            if case .integer(let v) = value, v >= 0 {
                throw fail(key, "got the address \(v) (0x\(String(v, radix: 16))); allowed: \(allowed)")
            }
            throw got(key, value, allowed: allowed)
        }
        return UInt8(n)
    }

    func bytes(_ value: ConfigValue, at key: String) throws(MappingFileError) -> [UInt8] {
        switch value {
        case .integer(let v) where (0...255).contains(v):
            return [UInt8(v)]
        case .array(let items) where (1...Self.maxRun).contains(items.count):
            var out: [UInt8] = []
            for (i, item) in items.enumerated() {
                guard case .integer(let v) = item, (0...255).contains(v) else {
                    throw got("\(key)[\(i)]", item, allowed: "an integer 0…255")
                }
                out.append(UInt8(v))
            }
            return out
        default:
            throw got(key, value, allowed: byteRun)
        }
    }

    func hex(_ a: UInt8) -> String { "0x" + Hex.string([a]) }
}
