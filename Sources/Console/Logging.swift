#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import SystemIO

/// How log records look on stderr: `text` for people, `json` (one object per line) for machines.
package enum LogFormat: String, CaseIterable, Sendable {
    case text, json
}

/// A swift-log handler that writes one line per record to stderr, above the live status line.
package struct ConsoleLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    let label: String
    let format: LogFormat
    let status: StatusLine?

    package init(label: String, level: Logger.Level, format: LogFormat, status: StatusLine?) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.status = status
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let line: String
        switch format {
        case .text:
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            line = "\(event.level): \(event.message)" + (fields.isEmpty ? "" : " [\(fields)]")
        case .json:
            var object = "{\"time\":\(Self.wallClock()),\"level\":\"\(event.level)\",\"logger\":\(Self.quote(label)),\"message\":\(Self.quote("\(event.message)"))"
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                object += ",\(Self.quote(key)):\(Self.json(value))"
            }
            line = object + "}"
        }
        if let status { status.printAbove(line) } else { StandardError.write(line + "\n") }
    }

    static func wallClock() -> String {
        let ts = WallClock.now()
        let ms = (ts.tv_nsec / 1_000_000)
        return "\(ts.tv_sec).\(ms < 10 ? "00" : ms < 100 ? "0" : "")\(ms)"
    }

    /// A metadata value in the JSON format: a string, except a dictionary, which is an object
    /// whose whole-number values are numbers (`"sensors":{"sensor1":12,…}`).
    static func json(_ value: Logger.Metadata.Value) -> String {
        guard case .dictionary(let fields) = value else { return quote("\(value)") }
        let members = fields.sorted { $0.key < $1.key }.map { key, v -> String in
            if case .string(let text) = v, let number = Int(text) { return "\(quote(key)):\(number)" }
            return "\(quote(key)):\(json(v))"
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// JSON string literal with the escapes RFC 8259 requires.
    package static func quote(_ s: String) -> String { JSONText.quote(s) }
}

package enum ConsoleLogging {
    /// Installs the console handler for the whole process (call once, from the executable).
    package static func bootstrap(level: Logger.Level, format: LogFormat, status: StatusLine?) {
        LoggingSystem.bootstrap { label in
            ConsoleLogHandler(label: label, level: level, format: format, status: status)
        }
    }
}
