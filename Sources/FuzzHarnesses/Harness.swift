/// One fuzz target per decoder that takes bytes from outside the process: datagrams, board
/// replies, MIDI bytes, files and lines a user hands us, terminal input, DNS-SD TXT records.
///
/// Contract of every harness: it must return normally for *any* input. A trap (bounds, overflow,
/// a failed `precondition` stating one of the invariants below) is a finding. The same functions
/// run under libFuzzer (`scripts/fuzz.sh`, address sanitizer) and, as ordinary tests, over the seed
/// corpus and every input a fuzzer ever crashed on (`Fuzz/corpus/NAME/`), so a finding stays fixed.
package enum Harness: String, CaseIterable, Sendable {
    case statePacket = "state-packet"
    case controlDatagram = "control-datagram"
    case reliableFragments = "reliable-fragments"
    case receiverDatagrams = "receiver-datagrams"
    case boardReplies = "board-replies"
    case midiNotePairs = "midi-note-pairs"
    case midiStream = "midi-stream"
    case midiConfig = "midi-config"
    case mappingTOML = "mapping-toml"
    case mappingJSON = "mapping-json"
    case gamepadConfig = "gamepad-config"
    case script = "script"
    case stateLine = "state-line"
    case terminalInput = "terminal-input"
    case txtRecord = "txt-record"
    case sealedEnvelope = "sealed-envelope"
    case recording = "recording"

    /// Feeds one input to the decoder and checks what it made of it.
    package func run(_ bytes: [UInt8]) {
        switch self {
        case .statePacket: Self.statePacket(bytes)
        case .controlDatagram: Self.controlDatagram(bytes)
        case .reliableFragments: Self.reliableFragments(bytes)
        case .receiverDatagrams: Self.receiverDatagrams(bytes)
        case .boardReplies: Self.boardReplies(bytes)
        case .midiNotePairs: Self.midiNotePairs(bytes)
        case .midiStream: Self.midiStream(bytes)
        case .midiConfig: Self.midiConfig(bytes)
        case .mappingTOML: Self.mapping(bytes, json: false)
        case .mappingJSON: Self.mapping(bytes, json: true)
        case .gamepadConfig: Self.gamepadConfig(bytes)
        case .script: Self.script(bytes)
        case .stateLine: Self.stateLine(bytes)
        case .terminalInput: Self.terminalInput(bytes)
        case .txtRecord: Self.txtRecord(bytes)
        case .sealedEnvelope: Self.sealedEnvelope(bytes)
        case .recording: Self.recording(bytes)
        }
    }
}

/// Cuts fuzzer input into records `[length][bytes…]` (length = one byte), the shape of a stream of
/// datagrams or of reads of varying size. A short last record takes what is left.
struct Records: Sequence, IteratorProtocol {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> ArraySlice<UInt8>? {
        guard index < bytes.count else { return nil }
        let length = Int(bytes[index])
        let start = index + 1
        let end = Swift.min(bytes.count, start + length)
        index = end
        return bytes[start..<end]
    }
}
