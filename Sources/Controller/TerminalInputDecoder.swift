/// One thing a terminal said on its input side.
package enum TerminalEvent: Equatable, Sendable {
    case key(Key, KeyAction, KeyModifiers)
    /// Focus reporting (`CSI ? 1004 h`): `CSI I` = gained, `CSI O` = lost.
    case focus(Bool)
    /// The kitty keyboard protocol's answer to the query `CSI ? u`: the flags now in force.
    case keyboardFlags(Int)
}

package enum Key: Hashable, Sendable {
    /// A text key, by its unshifted code point as the terminal reported it (case is kept for
    /// legacy input: shift+w arrives as `W`).
    case character(Unicode.Scalar)
    case up, down, left, right
    case escape
    /// Anything else (function keys, keypad, modifiers on their own).
    case other
}

package enum KeyAction: Hashable, Sendable {
    case press, `repeat`, release
}

package struct KeyModifiers: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    package static let shift = KeyModifiers(rawValue: 1)
    package static let alt = KeyModifiers(rawValue: 2)
    package static let ctrl = KeyModifiers(rawValue: 4)
    package static let `super` = KeyModifiers(rawValue: 8)
}

/// Decodes a terminal's input bytes into ``TerminalEvent``s, one at a time: ``feed(_:)`` bytes,
/// then call ``next()`` until it returns nil (nil = nothing complete yet; an unfinished escape
/// sequence stays buffered for the next read).
///
/// Understands:
/// - plain text (UTF-8) and control bytes: 0x01…0x1A = ctrl+a…ctrl+z (except tab, LF, CR),
///   0x1C = ctrl+\ ;
/// - legacy cursor keys `CSI A…D` and `SS3 A…D`, also with xterm/kitty parameters
///   `CSI 1;MODS[:EVENT] A…D`;
/// - kitty keyboard protocol keys `CSI CODE[:ALTERNATES][;MODS[:EVENT][;TEXT]] u`, where MODS is
///   1 + (shift 1, alt 2, ctrl 4, super 8, …) and EVENT is 1 press (default), 2 repeat, 3 release;
/// - the kitty flags reply `CSI ? FLAGS u`; focus reports `CSI I` / `CSI O`.
/// Every other control sequence is consumed and ignored. The buffer is bounded: an escape
/// sequence longer than ``maximumSequence`` bytes is dropped.
package struct TerminalInputDecoder: Sendable {
    package static let maximumSequence = 64
    private var buffer: [UInt8] = []

    package init() {}

    package mutating func feed(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Bytes kept for an unfinished sequence.
    package var pending: Int { buffer.count }

    package mutating func next() -> TerminalEvent? {
        while !buffer.isEmpty {
            switch step() {
            case .needMore: return nil
            case .skip(let n): buffer.removeFirst(n)
            case .event(let event, let n):
                buffer.removeFirst(n)
                return event
            }
        }
        return nil
    }

    private enum Step {
        case needMore
        case skip(Int)
        case event(TerminalEvent, Int)
    }

    private func step() -> Step {
        let b = buffer[0]
        switch b {
        case 0x1B:
            return escape()
        case 0x09, 0x0A, 0x0D:
            return .event(.key(.character(Unicode.Scalar(b)), .press, []), 1)
        case 0x01...0x1A:
            return .event(.key(.character(Unicode.Scalar(b + 0x60)), .press, .ctrl), 1)
        case 0x1C:
            return .event(.key(.character("\\"), .press, .ctrl), 1)
        case 0x00, 0x1D...0x1F, 0x7F:
            return .event(.key(.other, .press, []), 1)
        case 0x20...0x7E:
            return .event(.key(.character(Unicode.Scalar(b)), .press, []), 1)
        default:
            return utf8()
        }
    }

    private func utf8() -> Step {
        let lead = buffer[0]
        let count: Int
        switch lead {
        case 0xC2...0xDF: count = 2
        case 0xE0...0xEF: count = 3
        case 0xF0...0xF4: count = 4
        default: return .skip(1)
        }
        var value = UInt32(lead) & (0xFF >> (count + 1))
        for i in 1..<count {
            guard i < buffer.count else { return .needMore }
            let c = buffer[i]
            guard c & 0xC0 == 0x80 else { return .skip(1) }
            value = value << 6 | UInt32(c & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value) else { return .skip(count) }
        return .event(.key(.character(scalar), .press, []), count)
    }

    private func escape() -> Step {
        guard buffer.count >= 2 else { return .needMore }
        switch buffer[1] {
        case UInt8(ascii: "["):
            return controlSequence()
        case UInt8(ascii: "O"):
            guard buffer.count >= 3 else { return .needMore }
            let key: Key = switch buffer[2] {
            case UInt8(ascii: "A"): .up
            case UInt8(ascii: "B"): .down
            case UInt8(ascii: "C"): .right
            case UInt8(ascii: "D"): .left
            default: .other
            }
            return .event(.key(key, .press, []), 3)
        default:
            // A lone Esc, or Alt+key sent as Esc then the key: report Esc, the key follows.
            return .event(.key(.escape, .press, []), 1)
        }
    }

    /// `ESC [ params intermediates final`: params 0x30–0x3F, intermediates 0x20–0x2F,
    /// final 0x40–0x7E.
    private func controlSequence() -> Step {
        var i = 2
        while true {
            guard i < buffer.count else {
                return buffer.count > Self.maximumSequence ? .skip(buffer.count) : .needMore
            }
            let c = buffer[i]
            if (0x40...0x7E).contains(c) { break }
            guard (0x20...0x3F).contains(c) else { return .skip(2) }   // malformed: drop ESC [
            i += 1
            if i > Self.maximumSequence { return .skip(i) }
        }
        let params = String(decoding: buffer[2..<i], as: UTF8.self)
        let length = i + 1
        guard let event = Self.interpret(params: params, final: buffer[i]) else { return .skip(length) }
        return .event(event, length)
    }

    static func interpret(params: String, final: UInt8) -> TerminalEvent? {
        switch final {
        case UInt8(ascii: "u"):
            if params.hasPrefix("?") { return Int(params.dropFirst()).map { .keyboardFlags($0) } }
            guard let first = params.first, first.isASCII, first.isNumber else { return nil }
            let fields = params.split(separator: ";", omittingEmptySubsequences: false)
            guard let code = fields.first?.split(separator: ":").first.flatMap({ UInt32($0) }) else { return nil }
            let (mods, action) = modifiersAndAction(fields.count > 1 ? fields[1] : nil)
            return .key(key(code: code), action, mods)
        case UInt8(ascii: "A"), UInt8(ascii: "B"), UInt8(ascii: "C"), UInt8(ascii: "D"):
            let fields = params.split(separator: ";", omittingEmptySubsequences: false)
            let (mods, action) = modifiersAndAction(fields.count > 1 ? fields[1] : nil)
            let key: Key = switch final {
            case UInt8(ascii: "A"): .up
            case UInt8(ascii: "B"): .down
            case UInt8(ascii: "C"): .right
            default: .left
            }
            return .key(key, action, mods)
        case UInt8(ascii: "I") where params.isEmpty:
            return .focus(true)
        case UInt8(ascii: "O") where params.isEmpty:
            return .focus(false)
        default:
            return nil
        }
    }

    /// `MODS[:EVENT]`; absent fields mean no modifiers and a press.
    static func modifiersAndAction(_ field: Substring?) -> (KeyModifiers, KeyAction) {
        guard let field else { return ([], .press) }
        let parts = field.split(separator: ":", omittingEmptySubsequences: false)
        let encoded = parts.first.flatMap { Int($0) } ?? 1
        let mods = KeyModifiers(rawValue: UInt8(truncatingIfNeeded: max(0, encoded - 1)) & 0x0F)
        let action: KeyAction = switch parts.count > 1 ? Int(parts[1]) : 1 {
        case 2: .repeat
        case 3: .release
        default: .press
        }
        return (mods, action)
    }

    /// Kitty key codes: Unicode code points for text keys, a few C0 codes for named keys, and
    /// the private-use range (57344…) for keys we do not use.
    static func key(code: UInt32) -> Key {
        switch code {
        case 27: return .escape
        case 57344...63743: return .other
        default: return Unicode.Scalar(code).map { .character($0) } ?? .other
        }
    }
}
