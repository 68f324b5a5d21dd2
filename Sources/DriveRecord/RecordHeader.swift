/// The first line of a recording (Protocol.md §10.2): what made it, when and against what.
///
///     {"format":"analog-remote-recording","version":1,"kind":"drive","start":"2026-11-25T16:40:00.123Z",
///      "start_unix_ms":1795624800123,"input":"script:config-examples/drive-square.script",
///      "receiver":"127.0.0.1:27183","session":"","rate":50}
package struct RecordHeader: Equatable, Sendable {
    /// The `format` member every recording starts with.
    package static let format = "analog-remote-recording"
    /// The one version this reader knows; a file of another version is refused by number.
    package static let version = 1

    package enum Kind: String, Sendable, CaseIterable {
        /// `control --record`: what a controller sent and heard.
        case drive
        /// `receive --black-box`: what a receiver took and did, its last seconds.
        case blackBox = "black-box"
    }

    package var kind: Kind
    /// Wall-clock time of t = 0, milliseconds since 1970 (UTC).
    package var startUnixMillis: UInt64
    /// What drove: `keyboard`, `script:FILE`, `gamepad`, `phone "Ann"`, `receiver` (black box).
    package var input: String
    /// The receiver: `HOST:PORT` for a controller, empty when unknown.
    package var receiver: String
    /// The DNS-SD session id, empty without one.
    package var session: String
    /// Packets per second while nothing changes (a controller's `--rate`); nil for a black box.
    package var rate: Double?

    package init(kind: Kind, startUnixMillis: UInt64, input: String, receiver: String = "", session: String = "",
                rate: Double? = nil) {
        self.kind = kind
        self.startUnixMillis = startUnixMillis
        self.input = input
        self.receiver = receiver
        self.session = session
        self.rate = rate
    }

    /// The header line, without its newline.
    package func encode() -> String {
        var line = "{\"format\":\(RecordJSON.quoted(Self.format)),\"version\":\(Self.version),\"kind\":\(RecordJSON.quoted(kind.rawValue))"
        line += ",\"start\":\(RecordJSON.quoted(RecordTime.iso8601(unixMillis: startUnixMillis))),\"start_unix_ms\":\(startUnixMillis)"
        line += ",\"input\":\(RecordJSON.quoted(input)),\"receiver\":\(RecordJSON.quoted(receiver)),\"session\":\(RecordJSON.quoted(session))"
        line += ",\"rate\":" + (rate.map { RecordNumber.plain($0, places: 3) } ?? "null")
        return line + "}"
    }

    /// Reads a header from a parsed line; the reason it is not one.
    package static func decode(_ json: RecordJSON) -> Result<RecordHeader, RecordLineError> {
        guard case .object = json else { return .failure(.init("expected the header object first")) }
        guard case .string(let format)? = json["format"], format == Self.format else {
            return .failure(.init("not an analog-remote recording (the first line must have \"format\":\"\(Self.format)\")"))
        }
        guard let version = json["version"]?.double else { return .failure(.init("the header has no \"version\" number")) }
        guard version == Double(Self.version) else {
            return .failure(.init("format version \(RecordNumber.plain(version, places: 3)) is not supported (this analog-remote reads version \(Self.version); record it again, or use the analog-remote that made it)"))
        }
        guard case .string(let kindText)? = json["kind"], let kind = Kind(rawValue: kindText) else {
            return .failure(.init("the header's \"kind\" must be \"drive\" or \"black-box\""))
        }
        guard let ms = json["start_unix_ms"]?.double, ms >= 0, ms < 1e15, ms == ms.rounded() else {
            return .failure(.init("the header's \"start_unix_ms\" must be whole milliseconds since 1970"))
        }
        var header = RecordHeader(kind: kind, startUnixMillis: UInt64(ms), input: "")
        let texts: [(String, WritableKeyPath<RecordHeader, String>)] = [("input", \.input), ("receiver", \.receiver), ("session", \.session)]
        for (key, path) in texts {
            switch json[key] {
            case .string(let s)?: header[keyPath: path] = s
            case nil, .null?: break
            default: return .failure(.init("the header's \"\(key)\" must be a string"))
            }
        }
        switch json["rate"] {
        case let value? where (value.double ?? 0) > 0: header.rate = value.double
        case nil, .null?: break
        default: return .failure(.init("the header's \"rate\" must be a positive number or null"))
        }
        return .success(header)
    }
}

/// Why one line is not what the format says (the line number is added by ``RecordReader``).
package struct RecordLineError: Error, Equatable, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}
