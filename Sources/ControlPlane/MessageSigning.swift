import ControlWire

/// The teacher key's MAC on the control messages that carry one (Protocol.md §7.6, §7.10–§7.12):
/// the first ``TeacherMAC/size`` bytes of HMAC-SHA256 over each message's labelled signed bytes.
/// The messages and their bytes are ControlWire's; the MAC needs a crypto library, so it is here.
extension TeacherMAC {
    package static func tag(_ bytes: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMACSHA256.authenticate(bytes, key: key).prefix(size))
    }

    /// Constant-time comparison of `mac` with the tag of `bytes`.
    package static func matches(_ mac: [UInt8], _ bytes: [UInt8], key: [UInt8]) -> Bool {
        guard mac.count == size else { return false }
        let expected = tag(bytes, key: key)
        var diff: UInt8 = 0
        for i in 0..<size { diff |= expected[i] ^ mac[i] }
        return diff == 0
    }
}

extension ControlMessage.StopAll {
    /// Fills ``mac`` from `key` (UTF-8 bytes of the teacher key).
    package mutating func sign(key: [UInt8]) { mac = TeacherMAC.tag(signedBytes, key: key) }

    /// Constant-time check of ``mac`` against `key`.
    package func verify(key: [UInt8]) -> Bool { TeacherMAC.matches(mac, signedBytes, key: key) }
}

extension ControlMessage.StopAllReply {
    package mutating func sign(key: [UInt8]) { mac = TeacherMAC.tag(Self.label + signedBytes, key: key) }

    /// Constant-time check of ``mac`` against `key`.
    package func verify(key: [UInt8]) -> Bool { TeacherMAC.matches(mac, Self.label + signedBytes, key: key) }
}

extension TeacherCommand {
    package mutating func sign(key: [UInt8]) { mac = TeacherMAC.tag(signedBytes, key: key) }
    package func verify(key: [UInt8]) -> Bool { TeacherMAC.matches(mac, signedBytes, key: key) }
}

extension TeacherReply {
    package mutating func sign(key: [UInt8]) { mac = TeacherMAC.tag(Self.label + signedBytes, key: key) }
    package func verify(key: [UInt8]) -> Bool { TeacherMAC.matches(mac, Self.label + signedBytes, key: key) }
}

extension WatchReport {
    /// Signs the report for the watch whose command carried `watchNonce`.
    package mutating func sign(key: [UInt8], watchNonce: UInt64) {
        mac = TeacherMAC.tag(Self.macInput(signedBytes[...], watchNonce: watchNonce), key: key)
    }

    /// Whether the MAC is right for the watch whose command carried `watchNonce`.
    package func verify(key: [UInt8], watchNonce: UInt64) -> Bool {
        TeacherMAC.matches(mac, Self.macInput(signedBytes[...], watchNonce: watchNonce), key: key)
    }

    /// Checks a report's payload as it arrived (row bytes, then the MAC), not as decoded: a
    /// decoder escapes control characters in the strings, which would change the bytes.
    package static func verify(payload: ArraySlice<UInt8>, key: [UInt8], watchNonce: UInt64) -> Bool {
        guard payload.count > TeacherMAC.size else { return false }
        let row = payload.dropLast(TeacherMAC.size)
        return TeacherMAC.matches(Array(payload.suffix(TeacherMAC.size)), macInput(row, watchNonce: watchNonce), key: key)
    }
}
