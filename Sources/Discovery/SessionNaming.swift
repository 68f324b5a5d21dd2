// Pure: standard library only. How a session ID becomes DNS-SD names (Protocol.md §6).

/// A session ID: any UTF-8 text both ends agree on ("KLabRemoteSample", "3年B組 チーム2"), as
/// GameKit's sessionID. Receivers of a session advertise under a subtype derived from it;
/// controllers browse that subtype and then compare the full ID carried in TXT `session=`, so a
/// hash collision can never join two sessions.
///
/// Contract: the ID is used byte for byte (its UTF-8 encoding, no Unicode normalization):
/// "café" typed as NFC and as NFD are two different sessions.
package struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The service type every receiver registers (RFC 6763 §7: `_` + at most 15 characters).
    package static let serviceType = "_analogremote._udp"
    /// The service type of a program's session peer (``ServiceRole/peer``).
    package static let peerServiceType = "_analogsession._udp"
    /// The longest ID in UTF-8 bytes: `session=` plus the ID must fit one 255-byte TXT string.
    package static let maximumByteCount = 255 - "session=".utf8.count

    package let text: String

    package init(_ text: String) throws(SessionIDError) {
        let count = text.utf8.count
        if count == 0 { throw .empty }
        if count > Self.maximumByteCount { throw .tooLong(byteCount: count) }
        self.text = text
    }

    /// FNV-1a (64-bit) of the ID's UTF-8 bytes.
    package var hash: UInt64 { FNV1a64.hash(text.utf8) }

    /// `_s` + 16 lowercase hex digits of ``hash``, e.g. `_s4e8ba4ad1f4ecd4c`. A leading underscore
    /// because `avahi-publish --sub` refuses subtypes without one.
    package var subtype: String { "_s" + FNV1a64.hex(hash) }

    /// The type string for `DNSServiceRegister`: Avahi's compat layer takes one subtype as
    /// `type,subtype` (it rejects `subtype._sub.type` in register: -65549, measured on 0.8).
    package var registrationType: String { registrationType(.receiver) }

    /// The DNS-SD subtype browse name (RFC 6763 §7.1), the form `avahi-browse` also takes.
    package var browseType: String { browseType(.receiver) }

    /// ``registrationType`` for a service of `role`.
    package func registrationType(_ role: ServiceRole) -> String { role.serviceType + "," + subtype }

    /// ``browseType`` for services of `role`.
    package func browseType(_ role: ServiceRole) -> String { subtype + "._sub." + role.serviceType }

    /// The first 8 hex digits of ``hash``: the session's mark in instance names
    /// (``InstanceName/forDisplay(_:in:)``), e.g. `6c11ba5f`.
    package var shortHash: String { String(FNV1a64.hex(hash).prefix(8)) }

    package var description: String { text }

    // Byte-exact, like the subtype: Swift's String == would call NFC and NFD spellings equal.
    package static func == (a: SessionID, b: SessionID) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }
    package func hash(into hasher: inout Hasher) { for b in text.utf8 { hasher.combine(b) } }
}

/// What a DNS-SD service of a session is (Protocol.md §6.1, §7.13). Each role has its own service
/// type, so a controller browsing for receivers never sees a program's session peer (and cannot
/// resolve one by name), while both share the session's subtype.
package enum ServiceRole: Hashable, Sendable, CaseIterable {
    /// `analog-remote receive` (or an embedded receiver): driven by controllers.
    case receiver
    /// A program's session (AnalogRemoteKit's `RemoteSession`): exchanges data, drives nothing.
    case peer

    /// `_analogremote._udp` for receivers, `_analogsession._udp` for peers.
    package var serviceType: String {
        switch self {
        case .receiver: SessionID.serviceType
        case .peer: SessionID.peerServiceType
        }
    }
}

package enum SessionIDError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(byteCount: Int)

    package var description: String {
        switch self {
        case .empty: "the session ID is empty (give any text, e.g. --session KLabRemoteSample)"
        case .tooLong(let n): "the session ID is \(n) bytes of UTF-8; at most \(SessionID.maximumByteCount) fit in a TXT record"
        }
    }
}

/// FNV-1a, 64-bit (Fowler–Noll–Vo): tiny, deterministic on every platform, good enough to spread
/// session IDs over subtypes. Not a security hash: TXT `session=` is the real check.
package enum FNV1a64 {
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    package static let prime: UInt64 = 0x0000_0100_0000_01b3

    package static func hash<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
        var h = offsetBasis
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* prime
        }
        return h
    }

    /// Exactly 16 lowercase hex digits, zero-padded.
    package static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// A peer ID, unique per process (GameKit's peerID): 16 lowercase hex digits from the system
/// random source. A restarted receiver gets a new one, so a controller can tell a restart.
package enum PeerID {
    package static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        return FNV1a64.hex(rng.next())
    }
}

/// Instance names (RFC 6763 §4.1.1: at most 63 bytes of UTF-8).
///
/// Names per session (Protocol.md §6.1): instance names are unique per service type on the link,
/// but a display name only has to be unique within its session, so a receiver registers as
/// `DISPLAY [SHORTHASH]` — its display name plus the session's ``SessionID/shortHash``. "robot2"
/// of session A and "robot2" of session B are then two different instances and neither is
/// renamed. A clash inside one session is still renamed by the responder, Avahi style
/// (`robot2 [6c11ba5f] #2`); ``parse(_:in:)`` reads that back as the display name "robot2 #2",
/// renamed from "robot2". Parsing needs only the instance name, so a controller can tell its
/// receiver (and a rename of it) from browse results alone, before resolving anything.
package enum InstanceName {
    package static let maximumByteCount = 63
    /// The longest display name kept in an instance name: room for ` [` + 8 hex + `]` (11 bytes)
    /// and a rename suffix up to ` #99` (4 bytes).
    package static let maximumDisplayByteCount = maximumByteCount - 11 - 4

    /// The instance name of a receiver called `display` in `session`: `robot2 [6c11ba5f]`. The
    /// display name is cut (on a character boundary) to ``maximumDisplayByteCount`` bytes.
    package static func forDisplay(_ display: String, in session: SessionID) -> String {
        cut(display, to: maximumDisplayByteCount) + " [" + session.shortHash + "]"
    }

    /// What an instance name says about a receiver of `session`: its display name, and the name
    /// it asked for when the responder renamed it. Nil when the name carries no mark of this
    /// session (a receiver announced by hand, or by an older version): its display name is then
    /// the instance name itself.
    package static func parse(_ instance: String, in session: SessionID) -> SessionName? {
        var base = Substring(instance)
        var rename: Int?
        if let split = splitRename(base) {
            rename = split.n
            base = split.base
        }
        let mark = " [" + session.shortHash + "]"
        guard base.hasSuffix(mark) else { return nil }
        let display = String(base.dropLast(mark.count))
        guard !display.isEmpty else { return nil }
        return SessionName(asked: display, rename: rename)
    }

    /// The instance name a controller resolves for `--receiver WANTED`: WANTED itself when it is
    /// already an instance name of the session; `base [mark] #n` for a renamed display name
    /// ("robot2 #2", as the driver saw it listed); otherwise ``forDisplay(_:in:)``.
    package static func forWanted(_ wanted: String, in session: SessionID) -> String {
        if parse(wanted, in: session) != nil { return wanted }
        if let split = splitRename(Substring(wanted)), !split.base.isEmpty {
            return forDisplay(String(split.base), in: session) + " #\(split.n)"
        }
        return forDisplay(wanted, in: session)
    }

    /// `name` without its rename suffix ` #n` (n ≥ 2, written without leading zeros) and n; nil
    /// when it has none. The one reading of Avahi's rename style here.
    static func splitRename(_ name: Substring) -> (base: Substring, n: Int)? {
        guard let hash = name.lastIndex(of: "#"), hash > name.startIndex, name[name.index(before: hash)] == " " else { return nil }
        let digits = name[name.index(after: hash)...]
        guard let n = Int(digits), n >= 2, String(n) == digits else { return nil }
        return (name[..<name.index(before: hash)], n)
    }

    /// A display name as an instance name carries it (for comparing with TXT `name=`).
    package static func displayFitted(_ display: String) -> String { cut(display, to: maximumDisplayByteCount) }

    private static func cut(_ name: String, to bytes: Int) -> String {
        if name.utf8.count <= bytes { return name }
        var out = ""
        for ch in name {
            if out.utf8.count + String(ch).utf8.count > bytes { break }
            out.append(ch)
        }
        return out
    }

    /// `name` cut to at most 63 bytes without splitting a character.
    package static func fitted(_ name: String) -> String {
        if name.utf8.count <= maximumByteCount { return name }
        var out = ""
        for ch in name {
            if out.utf8.count + String(ch).utf8.count > maximumByteCount { break }
            out.append(ch)
        }
        return out
    }

    /// The next name to try after a clash, in Avahi's own style: "robot" → "robot #2",
    /// "robot #2" → "robot #3". Still at most 63 bytes.
    package static func alternative(to name: String) -> String {
        var base = Substring(name)
        var next = 2
        if let split = splitRename(base) {
            base = split.base
            next = split.n + 1
        }
        let suffix = " #\(next)"
        return String(base).trimmedToFit(suffix) + suffix
    }
}

extension String {
    /// Drops trailing characters until `self + suffix` fits in an instance name.
    fileprivate func trimmedToFit(_ suffix: String) -> String {
        var s = self
        while !s.isEmpty && s.utf8.count + suffix.utf8.count > InstanceName.maximumByteCount { s.removeLast() }
        return s
    }
}

/// A receiver's name within its session, read from its instance name (``InstanceName/parse(_:in:)``).
package struct SessionName: Equatable, Hashable, Sendable {
    /// The display name the receiver asked for (`--name`).
    package let asked: String
    /// N when the responder renamed it to "asked #N" because another receiver of the same session
    /// already had the name.
    package let rename: Int?

    package init(asked: String, rename: Int?) {
        self.asked = asked
        self.rename = rename
    }

    /// The name people see and `--receiver` matches: "robot2", or "robot2 #2" after a rename.
    package var display: String { rename.map { "\(asked) #\($0)" } ?? asked }
}
