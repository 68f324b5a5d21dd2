import MIDIFraming

/// How command lines and replies travel: as they are (text), or wrapped in MIDI (SysEx out,
/// note pairs in). Holds the MIDI decoder's state between reads.
struct LinkFraming: Sendable {
    enum Kind: Sendable { case text, midi }
    let kind: Kind
    private var notes = NotePairDecoder()

    init(_ kind: Kind) { self.kind = kind }

    func encode(_ line: [UInt8], device: String) throws(BoardLinkError) -> [UInt8] {
        switch kind {
        case .text: return line
        case .midi:
            do {
                return try SysEx.frame(line)
            } catch {
                throw BoardLinkError(.protocolError, device: device, "\(device): \(error)")
            }
        }
    }

    mutating func decode(_ bytes: [UInt8]) -> [UInt8] {
        switch kind {
        case .text: bytes
        case .midi: notes.decode(bytes)
        }
    }

    mutating func reset() { notes = NotePairDecoder() }
}
