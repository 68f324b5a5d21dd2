import Foundation

/// The golden vectors in vectors/midi-input.json (Protocol.md §9): note names, MIDI byte streams
/// and the messages they are, pitch bend → tilt angle under the default mapping.
public struct MIDIInputVectors: Decodable, Sendable {
    public struct Note: Decodable, Sendable {
        public let number: Int
        public let name: String
    }
    public struct Stream: Decodable, Sendable {
        public let name: String
        public let bytes: String
        public let messages: [String]
    }
    public struct Bend: Decodable, Sendable {
        public let bytes: String
        public let value: Int
        public let angle: String
        public let angle_hex: String
    }
    public let notes: [Note]
    public let note_aliases: [Note]
    public let bad_note_names: [String]
    public let streams: [Stream]
    public let pitch_bend_angle: [Bend]

    public static let file = Paths.repositoryFile("vectors/midi-input.json")

    public static func load() throws -> MIDIInputVectors {
        try JSONDecoder().decode(MIDIInputVectors.self, from: Data(contentsOf: file))
    }
}
