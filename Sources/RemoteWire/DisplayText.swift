/// Text from outside (display names, deny reasons, board names in a control message) made safe
/// to print once, where it enters: a name holding ESC or a newline could otherwise forge log
/// lines or drive the terminal. Control characters (C0, DEL, C1) and the bidirectional
/// overrides and isolates are shown escaped as `\u{1B}`; everything else is kept as it is.
public enum DisplayText {
    public static func sanitised(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// True for a scalar that is shown escaped.
    public static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F: true                      // C0, DEL, C1 (ESC, CR, LF, CSI…)
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F: true // bidi embeddings, overrides, isolates, marks
        default: false
        }
    }
}
