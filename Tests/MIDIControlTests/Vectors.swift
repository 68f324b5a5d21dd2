import Foundation
import TestSupport

/// The pitch-bend → angle vectors of vectors/midi-input.json, as bytes and binary32 bits.
enum MIDIInputVectorsLoader {
    struct Bend {
        let bytes: [UInt8]
        let value: Int
        let angleBits: UInt32
    }

    static func load() throws -> [Bend] {
        try MIDIInputVectors.load().pitch_bend_angle.map { v in
            Bend(bytes: BoardTranscripts.bytes(hex: v.bytes), value: v.value, angleBits: UInt32(v.angle_hex, radix: 16)!)
        }
    }
}
