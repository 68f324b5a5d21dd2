/// The text that sets a simulated board's sensors (`board-sim --sensors FILE`): `key=value`
/// pairs separated by spaces or line breaks, e.g.
///
/// ```
/// sensor1=200 sensor2=0 sensor3=17 sensor4=255
/// switch=1 temperature=-3 humidity=45
/// ```
/// Keys: `sensor1`…`sensor4` (0…255), `switch` (0 or 1), `temperature` (−128…127 °C),
/// `humidity` (0…100 %RH); a `#` starts a comment to the end of the line. A key left out
/// keeps its value. The firmware's loop then writes them to 0x0b–0x0e, 0x11, 0x07 and 0x08.
package struct SensorSettings: Sendable, Hashable {
    package var values: [Key: Int] = [:]

    package enum Key: String, Sendable, Hashable, CaseIterable {
        case sensor1, sensor2, sensor3, sensor4, `switch`, temperature, humidity

        var range: ClosedRange<Int> {
            switch self {
            case .sensor1, .sensor2, .sensor3, .sensor4: 0...255
            case .switch: 0...1
            case .temperature: -128...127
            case .humidity: 0...100
            }
        }
    }

    /// What is wrong with a settings text: the offending word and why.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        package let word: String
        package let problem: String
        package var description: String { "\"\(word)\": \(problem)" }
    }

    package init(_ values: [Key: Int] = [:]) { self.values = values }

    /// Parses the whole text; the first bad word is the error (nothing is applied).
    package init(parsing text: String) throws(ParseError) {
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let content = line.prefix { $0 != "#" }
            for word in content.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let keys = Key.allCases.map(\.rawValue).joined(separator: ", ")
                guard parts.count == 2 else { throw ParseError(word: String(word), problem: "expected key=value (keys: \(keys))") }
                guard let key = Key(rawValue: String(parts[0])) else {
                    throw ParseError(word: String(word), problem: "unknown key (keys: \(keys))")
                }
                guard let value = Int(parts[1]), key.range.contains(value) else {
                    throw ParseError(word: String(word), problem: "\(key.rawValue) takes a whole number in \(key.range.lowerBound)…\(key.range.upperBound)")
                }
                values[key] = value
            }
        }
    }

    /// `inputs` with these settings applied (keys left out keep their value).
    package func applied(to inputs: SimulatedBoard.Inputs) -> SimulatedBoard.Inputs {
        var out = inputs
        func byte(_ key: Key) -> UInt8? { values[key].map { UInt8(truncatingIfNeeded: $0) } }
        if let v = byte(.sensor1) { out.sensors.0 = v }
        if let v = byte(.sensor2) { out.sensors.1 = v }
        if let v = byte(.sensor3) { out.sensors.2 = v }
        if let v = byte(.sensor4) { out.sensors.3 = v }
        if let v = values[.switch] { out.switchPressed = v != 0 }
        if let v = byte(.temperature) { out.temperature = v }
        if let v = byte(.humidity) { out.humidity = v }
        return out
    }
}
