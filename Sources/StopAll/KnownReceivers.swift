import Discovery
import RemoteWire
import SystemIO

/// The receivers of a session that took the last `stop-all`, kept in the state directory so that
/// the next one sends its stop to them at once, before DNS-SD has answered (the browse of a class
/// takes a round trip to the responder per receiver and per address family).
///
/// What it is trusted for: only where to send a stop. Every entry came from a reply to our own
/// command — with a teacher key, a reply signed with it — and names the robot id that reply gave;
/// the stop sent to it is signed for that id (or, without one, for the session: a stop, which
/// wherever it is forwarded can only stop a robot of this session). Nothing else in the run
/// changes because of it: an entry nobody answers from, and that DNS-SD does not list, is left
/// out of the count; a release still asks first.
///
/// The file, `stop-all-<16 hex digits of the session ID's FNV-1a>.txt`, is text: a line
/// `analog-remote stop-all v1`, a line `session <ID>` (an entry file of another session with the
/// same hash is ignored), then one line per receiver: `ROBOTID|- HEXADDRESS PORT SCOPE`
/// (4 or 16 address bytes in hex, the IPv6 scope id as a number, 0 for none). Lines that do not
/// parse are skipped; at most ``limit`` entries are read or written.
package struct KnownReceivers: Equatable, Sendable {
    package struct Entry: Equatable, Sendable {
        package var address: SocketAddress
        package var robot: RobotID?

        package init(address: SocketAddress, robot: RobotID?) {
            self.address = address
            self.robot = robot
        }
    }

    package var session: String
    package var entries: [Entry]

    package static let limit = 256
    static let header = "analog-remote stop-all v1"

    package init(session: String, entries: [Entry]) {
        self.session = session
        self.entries = Array(entries.prefix(Self.limit))
    }

    /// The file's name in the state directory for `session`.
    package static func fileName(session: String) -> String {
        "stop-all-" + FNV1a64.hex(FNV1a64.hash(session.utf8)) + ".txt"
    }

    /// The file's bytes; an entry for another session, a damaged file or none at all is empty.
    package static func parse(_ bytes: [UInt8], session: String) -> KnownReceivers {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 2, lines[0] == Self.header, lines[1] == "session " + session else {
            return KnownReceivers(session: session, entries: [])
        }
        var entries: [Entry] = []
        for line in lines.dropFirst(2) where entries.count < Self.limit {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 4, let bytes = Self.bytes(hex: f[1]), let port = UInt16(f[2]), port != 0, let scope = UInt32(f[3]),
                  let address = SocketAddress(addressBytes: bytes, port: port, scopeID: scope) else { continue }
            let robot: RobotID?
            if f[0] == "-" {
                robot = nil
            } else if let id = RobotID(f[0]), id.text == f[0] {
                robot = id
            } else {
                continue
            }
            let entry = Entry(address: address, robot: robot)
            if !entries.contains(entry) { entries.append(entry) }
        }
        return KnownReceivers(session: session, entries: entries)
    }

    /// The file's bytes for these entries (a session ID with a line break is kept nowhere:
    /// empty, so nothing is written for it).
    package var encoded: [UInt8] {
        guard !session.contains(where: \.isNewline) else { return [] }
        var text = Self.header + "\n" + "session " + session + "\n"
        for e in entries.prefix(Self.limit) {
            text += (e.robot?.text ?? "-") + " " + Self.hex(e.address.addressBytes) + " \(e.address.port) \(e.address.scopeID)\n"
        }
        return Array(text.utf8)
    }

    /// The file for `session` in `directory`; empty when there is none or it cannot be read.
    package static func load(directory: String, session: String) -> KnownReceivers {
        guard let dir = try? SafeDirectory(directory, create: false),
              let bytes = try? dir.read(fileName(session: session), limit: 64 * 1024) else {
            return KnownReceivers(session: session, entries: [])
        }
        return parse(bytes, session: session)
    }

    /// Replaces the file in `directory` (made when missing), whole or not at all. Best effort:
    /// a directory that cannot be written only means the next stop-all browses first.
    package func save(directory: String) {
        let bytes = encoded
        guard !bytes.isEmpty, let dir = try? SafeDirectory(directory, mode: 0o700) else { return }
        try? dir.replace(Self.fileName(session: session), with: bytes, mode: 0o600)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return s
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let units = Array(hex.utf8)
        guard units.count == 8 || units.count == 32 else { return nil }
        func nibble(_ u: UInt8) -> UInt8? {
            switch u {
            case 0x30...0x39: u - 0x30
            case 0x61...0x66: u - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: units.count, by: 2) {
            guard let h = nibble(units[i]), let l = nibble(units[i + 1]) else { return nil }
            out.append(h << 4 | l)
        }
        return out
    }
}
