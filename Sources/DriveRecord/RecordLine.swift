/// One entry as one JSON line, and back (Protocol.md §10.3). Pure: the caller does the I/O.
///
///     {"t":2.000312,"e":"state","angle":0.7854,"buttons":1}
///     {"t":3.1,"e":"robot","state":"failsafe","detail":"silence"}
///     {"t":4,"e":"link","rtt_ms":0.412,"loss":0}
///     {"t":5.25,"e":"board","values":[[34,64],[35,192]]}
package enum RecordLine {
    /// The largest tilt a state may carry: ±π/2 as the wire's binary32 (Protocol.md §2,
    /// bit pattern 0x3FC90FDB).
    package static let maximumAngle = Float(bitPattern: 0x3FC9_0FDB)
    /// Times beyond this (seconds) are refused: ten days of driving is not a recording.
    package static let maximumSeconds = 864_000.0

    /// The entry's line, without its newline.
    package static func encode(_ entry: RecordEntry) -> String {
        var line = "{\"t\":\(RecordNumber.seconds(micros: entry.micros)),\"e\":\"\(entry.event.name)\""
        switch entry.event {
        case .state(let angle, let buttons):
            line += ",\"angle\":\(angle.isFinite ? "\(angle)" : "0"),\"buttons\":\(buttons)"
        case .robot(let state, let detail):
            line += ",\"state\":\(RecordJSON.quoted(state)),\"detail\":\(RecordJSON.quoted(detail))"
        case .link(let rtt, let loss):
            line += ",\"rtt_ms\":" + (rtt.map { RecordNumber.plain($0, places: 3) } ?? "null")
            line += ",\"loss\":" + (loss.map { RecordNumber.plain($0, places: 3) } ?? "null")
        case .sensors(let v):
            line += (0..<4).map { ",\"sensor\($0 + 1)\":\(v.sensors[$0])" }.joined()
                + ",\"switch\":\(v.switchValue),\"temperature\":\(v.temperature),\"humidity\":\(v.humidity)"
        case .owner(let owner):
            line += ",\"owner\":" + (owner.map(RecordJSON.quoted) ?? "null")
        case .failsafe(let cause):
            line += ",\"cause\":\(RecordJSON.quoted(cause))"
        case .resumed:
            break
        case .teacher(let stopped):
            line += ",\"stopped\":\(stopped)"
        case .board(let values):
            line += ",\"values\":[" + values.map { "[\($0.address),\($0.value)]" }.joined(separator: ",") + "]"
        case .boardLink(let up, let text):
            line += ",\"up\":\(up),\"text\":\(RecordJSON.quoted(text))"
        case .mark(let text):
            line += ",\"text\":\(RecordJSON.quoted(text))"
        case .end(let reason):
            line += ",\"reason\":\(RecordJSON.quoted(reason))"
        }
        return line + "}"
    }

    /// Reads an entry from a parsed line. nil for an event this version does not know (a newer
    /// writer's addition, skipped); the reason when a known event is malformed.
    package static func decode(_ json: RecordJSON) -> Result<RecordEntry?, RecordLineError> {
        do {
            return .success(try entry(json))
        } catch {
            return .failure(error)
        }
    }

    static func entry(_ json: RecordJSON) throws(RecordLineError) -> RecordEntry? {
        guard case .object = json else { throw RecordLineError("expected a JSON object") }
        guard let t = json["t"]?.double else { throw RecordLineError("no time: every entry has \"t\" (seconds since the start)") }
        guard t >= 0, t <= maximumSeconds else { throw RecordLineError("time \(t) s is out of range (0…\(Int(maximumSeconds)))") }
        guard case .string(let name)? = json["e"] else { throw RecordLineError("no event: every entry has \"e\" (state, robot, link, …)") }
        let micros = Int64((t * 1_000_000).rounded())
        let event: RecordEvent
        switch name {
        case "state":
            guard let a = json["angle"]?.double else { throw RecordLineError("a state without an \"angle\" number") }
            let angle = Float(a)
            guard angle.isFinite, angle.magnitude <= maximumAngle else {
                throw RecordLineError("angle \(a) is outside ±π/2 (\(maximumAngle)) radians")
            }
            event = .state(angle: angle, buttons: try integer(json, "buttons", max: Double(UInt32.max), UInt32.self))
        case "robot":
            event = .robot(state: try string(json, "state"), detail: try string(json, "detail", optional: true))
        case "link":
            event = .link(roundTripMillis: try number(json, "rtt_ms", range: 0...3_600_000),
                          loss: try number(json, "loss", range: 0...1))
        case "sensors":
            let sensors = try (1...4).map { n throws(RecordLineError) in try integer(json, "sensor\(n)", max: 255, UInt8.self) }
            guard let t = json["temperature"]?.double, let temperature = Int8(exactly: t) else {
                throw RecordLineError("\"temperature\" must be a whole number -128…127")
            }
            event = .sensors(SensorValues(sensors: sensors, switchValue: try integer(json, "switch", max: 255, UInt8.self),
                                          temperature: temperature, humidity: try integer(json, "humidity", max: 255, UInt8.self)))
        case "owner":
            switch json["owner"] {
            case .string(let s)?: event = .owner(s)
            case .null?, nil: event = .owner(nil)
            default: throw RecordLineError("\"owner\" must be a string or null")
            }
        case "failsafe": event = .failsafe(cause: try string(json, "cause"))
        case "resumed": event = .resumed
        case "teacher":
            guard case .bool(let stopped)? = json["stopped"] else { throw RecordLineError("a teacher event without \"stopped\" true or false") }
            event = .teacher(stopped: stopped)
        case "board":
            guard case .array(let items)? = json["values"], items.count <= 256 else {
                throw RecordLineError("a board event needs \"values\": [[ADDRESS, VALUE], …] (at most 256)")
            }
            var values: [BoardValue] = []
            for item in items {
                guard case .array(let pair) = item, pair.count == 2, let a = pair[0].double, let v = pair[1].double,
                      let address = UInt8(exactly: a), let value = UInt8(exactly: v) else {
                    throw RecordLineError("a board value must be [ADDRESS, VALUE], each 0…255")
                }
                values.append(BoardValue(address: address, value: value))
            }
            event = .board(values)
        case "board-link":
            guard case .bool(let up)? = json["up"] else { throw RecordLineError("a board-link event without \"up\" true or false") }
            event = .boardLink(up: up, text: try string(json, "text", optional: true))
        case "mark": event = .mark(try string(json, "text"))
        case "end": event = .end(reason: try string(json, "reason", optional: true))
        default: return nil
        }
        return RecordEntry(micros: micros, event: event)
    }

    static func string(_ json: RecordJSON, _ key: String, optional: Bool = false) throws(RecordLineError) -> String {
        switch json[key] {
        case .string(let s)?: return s
        case nil where optional: return ""
        default: throw RecordLineError("\"\(key)\" must be a string")
        }
    }

    static func number(_ json: RecordJSON, _ key: String, range: ClosedRange<Double>) throws(RecordLineError) -> Double? {
        switch json[key] {
        case let value? where value.double.map(range.contains) == true: return value.double
        case .null?, nil: return nil
        default: throw RecordLineError("\"\(key)\" must be a number in \(RecordNumber.plain(range.lowerBound, places: 0))…\(RecordNumber.plain(range.upperBound, places: 0)) or null")
        }
    }

    static func integer<T: FixedWidthInteger>(_ json: RecordJSON, _ key: String, max: Double, _: T.Type) throws(RecordLineError) -> T {
        guard let n = json[key]?.double, n >= 0, n <= max, let v = T(exactly: n) else {
            throw RecordLineError("\"\(key)\" must be a whole number 0…\(T.max)")
        }
        return v
    }
}
