import Foundation
import RemoteWire

/// What the phone page sends over its WebSocket: one JSON object per text message, at most
/// ``maximumBytes`` long. The page's own code lives in `Sources/WebServer/Page/app.js`.
///
/// ```
/// {"t":"join","robot":"r1","name":"Ann","code":"4711"}   drive robot r1 as Ann (code: optional)
/// {"t":"s","a":0.3491,"b":5}                             the whole state: angle in radians,
///                                                        buttons as Protocol.md §2.2 bits
/// {"t":"stop","why":"hidden"}                            neutral now, then end this controller
/// {"t":"name","name":"Ann"}                              who types on this page (with a roster,
///                                                        the server lists only Ann's robot)
/// ```
///
/// Decoding applies Protocol.md §2.3 as a sender must: a non-finite angle is refused, a finite one
/// beyond ±π/2 is clamped, and only the four buttons a page has (forward, backward, A, B) pass;
/// any other bit is an error, so a page that sends garbage hears about it.
package enum PageMessage: Equatable, Sendable {
    case join(robot: String, name: String, code: String?)
    case state(ControllerState)
    case stop(why: String)
    case name(String)

    /// Longest text message a page may send (a join with a long name fits easily).
    package static let maximumBytes = 512
    /// Longest display name, in characters (Protocol.md's hello carries it as a str8).
    package static let maximumNameLength = 32
    /// The button bits a page may set: forward, backward, A, B.
    package static let pageButtons: UInt32 = 0xF
    /// Protocol.md §2.3 rule 3.
    package static let maximumAngle = Float.pi / 2

    private struct Wire: Decodable {
        var t: String
        var robot: String?
        var name: String?
        var code: String?
        var a: Double?
        var b: Int64?
        var why: String?
    }

    package static func decode(_ text: String) throws(PageMessageError) -> PageMessage {
        guard text.utf8.count <= maximumBytes else { throw .tooLong(text.utf8.count) }
        // The state message, ~60 a second per page, in its one usual form; all else (and the
        // unusual forms of it) through JSONDecoder, with the same outcome (StateText's contract).
        if let (a, b) = StateText.scan(text) { return try decode(Wire(t: "s", a: a, b: b)) }
        return try decodeGenerally(text)
    }

    /// ``decode(_:)`` through `JSONDecoder` for every text (the tests hold the fast way to it).
    static func decodeGenerally(_ text: String) throws(PageMessageError) -> PageMessage {
        guard text.utf8.count <= maximumBytes else { throw .tooLong(text.utf8.count) }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(text.utf8))
        } catch {
            throw .notJSON
        }
        return try decode(wire)
    }

    private static func decode(_ wire: Wire) throws(PageMessageError) -> PageMessage {
        switch wire.t {
        case "s":
            guard let a = wire.a, let b = wire.b else { throw .missing("a and b") }
            guard a.isFinite else { throw .angleNotFinite }
            guard b >= 0, b <= Int64(UInt32.max), UInt32(b) & ~pageButtons == 0 else { throw .unknownButtons(b) }
            let angle = min(max(Float(a), -maximumAngle), maximumAngle)
            return .state(ControllerState(angle: angle, buttons: Buttons(rawValue: UInt32(b))))
        case "join":
            guard let robot = wire.robot, !robot.isEmpty else { throw .missing("robot") }
            let name = try displayName(wire.name)
            let code = wire.code.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
            if let code, code.count > 16 || !code.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw .badCode
            }
            return .join(robot: robot, name: name, code: code)
        case "stop":
            return .stop(why: String((wire.why ?? "page").prefix(32)))
        case "name":
            return .name(try displayName(wire.name))
        default:
            throw .unknownType(String(wire.t.prefix(16)))
        }
    }

    static func displayName(_ raw: String?) throws(PageMessageError) -> String {
        let name = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .badName("type your name first") }
        guard name.count <= maximumNameLength else { throw .badName("at most \(maximumNameLength) characters") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badName("no control characters")
        }
        return name
    }
}

/// Why a page message was refused; ``description`` is the line the page shows.
package enum PageMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLong(Int)
    case notJSON
    case missing(String)
    case angleNotFinite
    case unknownButtons(Int64)
    case badName(String)
    case badCode
    case unknownType(String)

    package var description: String {
        switch self {
        case .tooLong(let n): "message of \(n) bytes: at most \(PageMessage.maximumBytes)"
        case .notJSON: "not a JSON object with a \"t\" field"
        case .missing(let what): "missing \(what)"
        case .angleNotFinite: "the angle must be a finite number of radians"
        case .unknownButtons(let b): "buttons \(b): only forward (1), backward (2), A (4) and B (8)"
        case .badName(let why): "name: \(why)"
        case .badCode: "pairing code: digits only, at most 16"
        case .unknownType(let t): "unknown message type \"\(t)\""
        }
    }
}
