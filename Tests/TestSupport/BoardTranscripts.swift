import Foundation

/// The golden board transcripts in vectors/board-transcripts.json (Protocol.md §4–5): what the
/// firmware answers, byte for byte, and what the host makes of it.
public struct BoardTranscripts: Decodable, Sendable {
    public struct Reply: Decodable, Sendable {
        public let echo: String
        public let response: String
        public let values: String?
    }
    public struct TextStep: Decodable, Sendable {
        public let name: String
        public let send: String
        public let receive: String
        public let replies: [Reply]
    }
    public struct SysExCase: Decodable, Sendable {
        public let body: String
        public let rawmidi: String
        public let packets: [String]
        public let line: String?
    }
    public struct PacketCase: Decodable, Sendable {
        public let name: String
        public let rawmidi: String
        public let packets: [String]
    }
    public struct NoteReply: Decodable, Sendable {
        public let name: String
        public let text: String
        public let packets: [String]
        public let rawmidi: String
    }
    public struct MIDIStep: Decodable, Sendable {
        public let name: String
        public let send: String
        public let receive: String
        public let text: String
        public let replies: [Reply]
    }
    public struct MIDI: Decodable, Sendable {
        public let sysex: [SysExCase]
        public let other: [PacketCase]
        public let replies: [NoteReply]
        public let session: [MIDIStep]
    }

    public let text: [TextStep]
    /// The same kind of steps on a new stock board (34 bytes, erased EEPROM).
    public let stock: [TextStep]
    public let midi: MIDI

    public static let file = Paths.repositoryFile("vectors/board-transcripts.json")

    public static func load() throws -> BoardTranscripts {
        try JSONDecoder().decode(BoardTranscripts.self, from: Data(contentsOf: file))
    }

    /// `"F0 57 20"` → bytes (spaces optional, either case); traps on bad hex: the file is ours.
    public static func bytes(hex: String) -> [UInt8] {
        let digits = hex.filter { !$0.isWhitespace }
        var out: [UInt8] = []
        var i = digits.startIndex
        while i < digits.endIndex {
            let j = digits.index(i, offsetBy: 2)
            out.append(UInt8(digits[i..<j], radix: 16)!)
            i = j
        }
        return out
    }
}

extension String {
    /// The string's bytes (the transcripts are ASCII).
    public var bytes: [UInt8] { Array(utf8) }
}

/// Splits `bytes` into random chunks (1…maxChunk) with a seeded generator, for chunking tests.
public func randomChunks(_ bytes: [UInt8], seed: UInt64, maxChunk: Int = 7) -> [[UInt8]] {
    var rng = SplitMix(seed: seed)
    var out: [[UInt8]] = []
    var i = 0
    while i < bytes.count {
        let n = Int.random(in: 1...maxChunk, using: &rng)
        out.append(Array(bytes[i..<min(bytes.count, i + n)]))
        i += n
    }
    return out
}

/// A tiny seeded generator so chunking tests are reproducible.
public struct SplitMix: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
