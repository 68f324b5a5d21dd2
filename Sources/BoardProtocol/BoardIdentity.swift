/// What a board is, as one probe tells: its firmware's product id and version, the size of
/// its memory map, and so its profile.
///
/// The probe is one bounded read from address 0, ``probe`` = `R 00 55` (85 bytes). The
/// firmware truncates a read at the end of its map, so the number of bytes in the reply *is*
/// the map size (up to 85; a reply of 85 bytes means "85 or more"). 85 is the most one reply
/// may carry: 3 characters a byte fill the firmware's 256-byte reply buffer at 85 (a longer
/// `G` overflows it). The first two bytes are the product id and the version, which the
/// firmware sets at boot (1 and 1 in the published firmware).
///
/// ```
///  host → board   R 00 55\n
///  board → host   R 00 55\n \r\n 01 01 00 00 22 xx … (34 bytes on a stock board) \r\n>
/// ```
package struct BoardIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The firmware's product id (memory-map byte 0x00).
    package var productID: UInt8
    /// The firmware's version (memory-map byte 0x01).
    package var version: UInt8
    /// Bytes in the board's memory map (``probeLength`` when the map is at least that large).
    package var mapSize: Int
    /// The firmware the map size tells (``BoardProfileKind/forMapSize(_:)``); nil for a map
    /// smaller than the published firmware's.
    package var profile: BoardProfileKind?

    package init(productID: UInt8, version: UInt8, mapSize: Int) {
        self.productID = productID
        self.version = version
        self.mapSize = mapSize
        profile = BoardProfileKind.forMapSize(mapSize)
    }

    /// The most bytes one read may ask for (the firmware's reply buffer).
    package static let probeLength = 85
    /// `R 00 55`: the whole map, or its first 85 bytes.
    package static let probe = BoardCommand.read(address: 0, count: UInt8(probeLength))

    /// Decodes the probe's reply; nil unless it is a read reply of at least 2 bytes.
    package init?(probeReply response: BoardResponse) {
        guard case .values(let map) = response, map.count >= 2 else { return nil }
        self.init(productID: map[0], version: map[1], mapSize: map.count)
    }

    /// `0x00–0x21`: the addresses the board has.
    package var addressRange: String {
        "0x00–0x" + ByteText.hexPair(UInt8(truncatingIfNeeded: max(0, min(mapSize, 256) - 1)))
    }

    /// The map size as a person reads it: `34 bytes` or `85+ bytes`.
    package var mapSizeText: String { mapSize >= Self.probeLength ? "\(mapSize)+ bytes" : "\(mapSize) bytes" }

    /// `stock firmware 1.1, 34-byte map`: for status lines and logs.
    package var summary: String {
        let name = profile.map { "\($0.rawValue) firmware" } ?? "unknown firmware"
        return "\(name) \(productID).\(version), \(mapSize >= Self.probeLength ? "\(mapSize)+" : "\(mapSize)")-byte map"
    }

    /// One line for `boards --probe`:
    /// `profile stock · firmware product 1 version 1 · memory map 34 bytes (0x00–0x21), no motor bytes`.
    package var description: String {
        let profileText = profile?.rawValue ?? "unknown (a map smaller than the published firmware's 34 bytes)"
        let motors: String
        switch profile {
        case .motors: motors = ", motors at 0x22/0x23"
        case .stock: motors = ", no motor bytes"
        case nil: motors = ""
        }
        return "profile \(profileText) · firmware product \(productID) version \(version) · memory map \(mapSizeText) (\(addressRange))\(motors)"
    }
}
