#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// ANSI colour for the few words a person must not miss (FAILSAFE, STOPPED BY TEACHER, NO
/// RECEIVER), on a terminal only. `NO_COLOR` set to anything but the empty string turns it off
/// (https://no-color.org); `TERM=dumb` too.
package enum Colour: Sendable {
    case green, yellow, red, plain

    /// Whether colour is wanted for a status line that is drawn (`enabled`) in this environment.
    package static func wanted(enabled: Bool, environment: [String: String]? = nil) -> Bool {
        guard enabled else { return false }
        func value(_ key: String) -> String? {
            if let environment { return environment[key] }
            return getenv(key).map { String(cString: $0) }
        }
        if let noColor = value("NO_COLOR"), !noColor.isEmpty { return false }
        if value("TERM") == "dumb" { return false }
        return true
    }

    /// `text` wrapped in this colour (bold for red), or unchanged when `on` is false.
    package func paint(_ text: String, on: Bool) -> String {
        guard on else { return text }
        let code: String
        switch self {
        case .green: code = "32"
        case .yellow: code = "33"
        case .red: code = "1;31"
        case .plain: return text
        }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }
}
