import BoardProtocol

/// The one-line reasons a board is refused (``BoardEvent/refused(device:reason:)``): each names
/// the device, the address, the board's map size and what to do.
package enum BoardRefusal {
    /// `role` (e.g. `drive.left.address`) needs `address`, which the board lacks.
    package static func missingAddress(_ address: UInt8, role: String, identity: BoardIdentity, device: String) -> String {
        let what = identity.profile == .stock ? "the stock firmware, no motor bytes" : identity.summary
        return "\(device): \(role) writes 0x\(ByteText.hexPair(address)) but this board's memory map has \(identity.mapSizeText) "
            + "(\(identity.addressRange): \(what)); use a mapping for the \(identity.profile?.rawValue ?? "board's") profile "
            + "(--profile \(identity.profile?.rawValue ?? "auto"), see config-examples/) or flash a firmware that has 0x\(ByteText.hexPair(address))"
    }

    /// The probe read a map smaller than the published firmware's.
    package static func unknownFirmware(_ identity: BoardIdentity, device: String) -> String {
        "\(device): the board's memory map has \(identity.mapSizeText), fewer than the published firmware's 34 "
            + "(product \(identity.productID), version \(identity.version)); nothing will be written: flash the kit's firmware "
            + "(webusb_leonard.ino) or check --board"
    }

    /// The probe's reply was not a memory map.
    package static func notAKitBoard(_ response: BoardResponse, device: String) -> String {
        "\(device): the board answered the probe \"\(BoardIdentity.probe.text)\" with \(ByteText.evidence(response.body)), "
            + "not a memory map; nothing will be written: is it the programland kit with its firmware? (check --board)"
    }

    /// The read-back after the first write of `address` did not find the value written.
    package static func droppedWrite(address: UInt8, wrote: UInt8, read: UInt8?, identity: BoardIdentity?, device: String) -> String {
        let got = read.map { "reads back \(ByteText.hexPair($0))" } ?? "is not on the board (the read stopped short)"
        let map = identity.map { "memory map \($0.mapSizeText), \($0.addressRange)" } ?? "memory map size unknown"
        return "\(device): the board dropped a write: 0x\(ByteText.hexPair(address)) was written \(ByteText.hexPair(wrote)) but \(got) "
            + "(\(map)); driving stopped: check which firmware it runs (analog-remote boards --probe) and the mapping, then reconnect the board"
    }
}
