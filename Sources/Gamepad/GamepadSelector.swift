/// Which pad to drive with: the `SELECTOR` of `--input gamepad[:SELECTOR]`.
///
/// | text | meaning |
/// |---|---|
/// | `gamepad` | the first pad that has a mapping |
/// | `gamepad:2` | the pad at index 2 of the current list (`analog-remote gamepads`) |
/// | `gamepad:0300…` (32 hex digits) | the first pad with this GUID (case-insensitive) |
/// | `gamepad:xbox` | the first pad whose name contains this text (case-insensitive) |
///
/// Rules: all digits = an index; exactly 32 hex digits = a GUID; anything else = a name part.
/// A GUID with `0000` in hex digits 4–7 (as in SDL's mapping database) matches whatever name
/// checksum SDL 2.26 puts there.
/// The choice is made again on every hot-plug, with the same rule: after an unplug, the
/// first pad that then matches is taken (for `gamepad`, any pad).
package enum GamepadSelector: Hashable, Sendable {
    case first
    case index(Int)
    case guid(String)
    case name(String)

    /// Parses the whole `--input` value (`gamepad`, `gamepad:…`). nil when it is not a gamepad
    /// input at all (`keyboard`, `gamepads`); throws for `gamepad:` with nothing after it.
    package init?(input text: String) throws(GamepadSelectorError) {
        if text == "gamepad" {
            self = .first
            return
        }
        guard text.hasPrefix("gamepad:") else { return nil }
        try self.init(selector: String(text.dropFirst("gamepad:".count)))
    }

    /// Parses what follows `gamepad:`.
    package init(selector: String) throws(GamepadSelectorError) {
        guard !selector.isEmpty else { throw GamepadSelectorError(text: selector) }
        if selector.allSatisfy(\.isASCII) && selector.allSatisfy(\.isNumber) {
            guard let index = Int(selector) else { throw GamepadSelectorError(text: selector) }
            self = .index(index)
        } else if selector.count == 32 && selector.allSatisfy(\.isHexDigit) {
            self = .guid(selector.lowercased())
        } else {
            self = .name(selector)
        }
    }

    /// Why no pad was chosen.
    package enum Miss: Error, Hashable, Sendable {
        /// SDL sees no joystick at all.
        case nothingConnected
        /// Pads are connected but none matches (they are listed).
        case noMatch(connected: [PadInfo])
        /// The pad that matches has no mapping, so it cannot be read as a gamepad.
        case noMapping(PadInfo)
        /// The pad that matches could not be opened (SDL's reason).
        case cannotOpen(PadInfo, reason: String)
    }

    /// Picks from the current list (in index order): the first match that has a mapping.
    package func choose(from pads: [PadInfo]) -> Result<PadInfo, Miss> {
        if pads.isEmpty { return .failure(.nothingConnected) }
        let matching = pads.filter(matches)
        if let usable = matching.first(where: \.hasMapping) { return .success(usable) }
        if let unmapped = matching.first { return .failure(.noMapping(unmapped)) }
        return .failure(.noMatch(connected: pads))
    }

    package func matches(_ pad: PadInfo) -> Bool {
        switch self {
        case .first: true
        case .index(let i): pad.index == i
        case .guid(let g): Self.sameGUID(pad.guid, g)
        case .name(let part): pad.name.lowercased().contains(part.lowercased())
        }
    }
}

extension GamepadSelector {
    /// Equal ignoring case; a `wanted` GUID without a name checksum (digits 4–7 `0000`) ignores
    /// the pad's checksum.
    static func sameGUID(_ padGUID: String, _ wanted: String) -> Bool {
        let pad = padGUID.lowercased(), want = wanted.lowercased()
        if pad == want { return true }
        guard pad.count == 32, want.count == 32, want.dropFirst(4).prefix(4) == "0000" else { return false }
        return pad.prefix(4) == want.prefix(4) && pad.dropFirst(8) == want.dropFirst(8)
    }
}

extension GamepadSelector: CustomStringConvertible {
    /// How the selection reads in a status line: `any gamepad`, `gamepad index 2`, ….
    package var description: String {
        switch self {
        case .first: "any gamepad"
        case .index(let i): "gamepad index \(i)"
        case .guid(let g): "gamepad GUID \(g)"
        case .name(let n): "gamepad named like \"\(n)\""
        }
    }
}

/// `gamepad:` with an empty or unusable selector.
package struct GamepadSelectorError: Error, Hashable, Sendable, CustomStringConvertible {
    package let text: String
    package init(text: String) { self.text = text }
    package var description: String {
        "gamepad:\(text): expected gamepad, gamepad:INDEX, gamepad:NAME-PART or gamepad:GUID (32 hex digits; see `analog-remote gamepads`)"
    }
}
