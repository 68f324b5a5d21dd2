// Pure: standard library only. DNS-SD TXT record data (RFC 6763 §6).

/// The key/value strings of a TXT record, in order.
///
/// Wire form: a sequence of strings, each one length byte (0–255) then that many bytes; a string
/// is `key=value` (value: any bytes, may be empty), or a bare `key` (a boolean attribute, no
/// value). Keys are printable US-ASCII without `=`, compared case-insensitively; when a key
/// appears twice the first one counts (§6.4). An empty record is a single zero byte (§6.1).
package struct TXTRecord: Equatable, Sendable {
    package struct Entry: Equatable, Sendable {
        package let key: String
        /// nil for a bare key (`key`), empty for `key=`.
        package let value: [UInt8]?

        package init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }
    }

    package private(set) var entries: [Entry] = []

    package init() {}

    /// Appends `key=value`. Throws if the key is not a valid TXT key or the string would exceed
    /// 255 bytes. A key already present is replaced, keeping its place.
    package mutating func set(_ key: String, _ value: String) throws(TXTRecordError) {
        try set(key, bytes: Array(value.utf8))
    }

    package mutating func set(_ key: String, bytes value: [UInt8]?) throws(TXTRecordError) {
        guard Self.isValidKey(key) else { throw .invalidKey(key) }
        let length = key.utf8.count + (value.map { 1 + $0.count } ?? 0)
        guard length <= 255 else { throw .tooLong(key: key, byteCount: length) }
        let entry = Entry(key: key, value: value)
        if let i = entries.firstIndex(where: { Self.sameKey($0.key, key) }) {
            entries[i] = entry
        } else {
            entries.append(entry)
        }
    }

    /// The value of `key` (case-insensitive): nil if absent, `.some(nil)` for a bare key.
    package subscript(key: String) -> [UInt8]?? {
        guard let e = entries.first(where: { Self.sameKey($0.key, key) }) else { return nil }
        return .some(e.value)
    }

    /// The value of `key` as UTF-8 text (invalid sequences repaired), nil if absent or bare.
    package func text(_ key: String) -> String? {
        guard let value = self[key], let bytes = value else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The wire bytes (never empty: a record with no entries is one zero byte).
    package var encoded: [UInt8] {
        var out: [UInt8] = []
        for e in entries {
            var item = Array(e.key.utf8)
            if let value = e.value { item.append(UInt8(ascii: "=")); item += value }
            out.append(UInt8(item.count))
            out += item
        }
        return out.isEmpty ? [0] : out
    }

    /// Parses wire bytes. Returns nil when a length byte runs past the end (the record is
    /// structurally broken). Within a well-formed record, strings that carry no usable key
    /// (empty, starting with `=`, or with bytes outside printable ASCII in the key) are skipped,
    /// and a repeated key keeps its first value, as RFC 6763 §6.4 asks.
    package static func decode<C: Collection>(_ bytes: C) -> TXTRecord? where C.Element == UInt8 {
        var record = TXTRecord()
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let length = Int(bytes[i])
            i = bytes.index(after: i)
            guard bytes.distance(from: i, to: bytes.endIndex) >= length else { return nil }
            let end = bytes.index(i, offsetBy: length)
            let item = bytes[i..<end]
            i = end
            let keyEnd = item.firstIndex(of: UInt8(ascii: "=")) ?? item.endIndex
            let keyBytes = item[item.startIndex..<keyEnd]
            guard !keyBytes.isEmpty, keyBytes.allSatisfy(isKeyByte) else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard record[key] == nil else { continue }
            let value: [UInt8]? = keyEnd == item.endIndex ? nil : Array(item[item.index(after: keyEnd)...])
            record.entries.append(Entry(key: key, value: value))
        }
        return record
    }

    package static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy(isKeyByte)
    }

    static func isKeyByte(_ b: UInt8) -> Bool { b >= 0x20 && b <= 0x7E && b != UInt8(ascii: "=") }

    static func sameKey(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }

    private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b + 0x20 : b }
}

package enum TXTRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidKey(String)
    case tooLong(key: String, byteCount: Int)

    package var description: String {
        switch self {
        case .invalidKey(let k): "TXT key \"\(k)\" is not printable ASCII without '='"
        case .tooLong(let k, let n): "TXT string \(k)=… is \(n) bytes; at most 255 fit"
        }
    }
}
