/// UTC calendar arithmetic for the header's human-readable `start` (no Foundation in a codec).
package enum RecordTime {
    /// `2026-11-25T16:40:00.123Z` for milliseconds since 1970.
    package static func iso8601(unixMillis: UInt64) -> String {
        let seconds = Int64(unixMillis / 1000)
        let millis = Int(unixMillis % 1000)
        let days = seconds / 86_400
        let rest = Int(seconds % 86_400)
        // Howard Hinnant's days-from-civil, inverted.
        let z = days + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(year)-\(two(month))-\(two(day))T\(two(Int64(rest / 3600))):\(two(Int64(rest / 60 % 60))):\(two(Int64(rest % 60))).\(ms)Z"
    }
}

/// Numbers as the format writes them: fixed decimals, no exponent, no trailing zeros.
package enum RecordNumber {
    /// `value` rounded to `places` decimals, e.g. `12.5`, `0.001`, `-3`.
    package static func plain(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<max(0, places) { scale *= 10 }
        let scaled = (value.magnitude * scale).rounded()
        // Past 2^53 a Double has no fraction to print, and `Int64(_:)` traps past 2^63: a header's
        // `"version":1e300` reached the error message here (found by the fuzzer). Numbers that large
        // only ever appear in messages, so the exponent form is fine for them.
        guard scaled < 9e15 else { return value.magnitude < 9e18 ? "\(Int64(value.rounded()))" : "\(value)" }
        let whole = Int64(scaled)
        let unit = Int64(scale)
        var text = "\(whole / unit)"
        var fraction = "\(whole % unit)"
        if places > 0, whole % unit != 0 {
            fraction = String(repeating: "0", count: places - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return (value < 0 && whole != 0 ? "-" : "") + text
    }

    /// Microseconds as seconds with six decimals at most: `1.5`, `0.000250`→`0.00025`.
    package static func seconds(micros: Int64) -> String {
        let sign = micros < 0 ? "-" : ""
        let m = micros.magnitude
        var text = "\(m / 1_000_000)"
        if m % 1_000_000 != 0 {
            var fraction = "\(m % 1_000_000)"
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return sign + text
    }
}
