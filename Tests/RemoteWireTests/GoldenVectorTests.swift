import Foundation
import RemoteWire
import TestSupport
import Testing

/// The golden vectors in vectors/state-packet.json are the contract other-language clients check
/// themselves against; Protocol.md shows the same table.
struct GoldenVectors: Decodable {
    struct Valid: Decodable { let name, angle, buttons, hex: String }
    struct Normalised: Decodable {
        let name, hex, angle, buttons: String
        let encodes_to: String
    }
    struct Rejected: Decodable { let name, hex, error: String }
    let valid: [Valid]
    let normalised: [Normalised]
    let rejected: [Rejected]

    static let file = Paths.repositoryFile("vectors/state-packet.json")
    static func load() throws -> GoldenVectors {
        try JSONDecoder().decode(GoldenVectors.self, from: Data(contentsOf: file))
    }
}

func parseAngle(_ text: String) -> Float? { text == "-0" ? -0.0 : Float(text) }

@Suite struct GoldenVectorTests {
    let vectors: GoldenVectors

    init() throws { vectors = try GoldenVectors.load() }

    @Test func fileHasEveryKindOfCase() {
        #expect(vectors.valid.count >= 10)
        #expect(vectors.normalised.count >= 4)
        #expect(vectors.rejected.contains { $0.error == "wrongLength" })
        #expect(vectors.rejected.contains { $0.error == "angleNotFinite" })
    }

    @Test func validStatesEncodeAndDecodeExactly() throws {
        for v in vectors.valid {
            let angle = try #require(parseAngle(v.angle), "\(v.name)")
            let buttons = try #require(Buttons(parsing: v.buttons[...]), "\(v.name)")
            let state = ControllerState(angle: angle, buttons: buttons)
            #expect(Hex.string(StatePacket.encode(state)) == v.hex, "\(v.name)")
            let decoded = try StatePacket.decode(try #require(Hex.bytes(v.hex)))
            #expect(decoded.angle.bitPattern == angle.bitPattern, "\(v.name)")
            #expect(decoded.buttons == buttons, "\(v.name)")
        }
    }

    @Test func outOfRangeInputIsNormalisedAsDocumented() throws {
        for v in vectors.normalised {
            let decoded = try StatePacket.decode(try #require(Hex.bytes(v.hex)))
            #expect(decoded.angle == (try #require(parseAngle(v.angle))), "\(v.name)")
            #expect(decoded.buttons == Buttons(parsing: v.buttons[...]), "\(v.name)")
            #expect(Hex.string(StatePacket.encode(decoded)) == v.encodes_to, "\(v.name)")
        }
    }

    @Test func rejectedPacketsCarryReasonAndBytes() throws {
        for v in vectors.rejected {
            let bytes = try #require(Hex.bytes(v.hex))
            #expect(throws: StatePacketError(try #require(.init(rawValue: v.error)), bytes: bytes), "\(v.name)") {
                try StatePacket.decode(bytes)
            }
        }
    }

    /// Protocol.md reproduces every vector; a vector changed in one place must change in both.
    @Test func protocolDocumentShowsEveryVector() throws {
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for hex in vectors.valid.map(\.hex) + vectors.normalised.map(\.hex) + vectors.rejected.map(\.hex) where !hex.isEmpty {
            let spaced = stride(from: 0, to: hex.count, by: 2).map { i -> String in
                let s = hex.index(hex.startIndex, offsetBy: i)
                return String(hex[s..<hex.index(s, offsetBy: 2)])
            }.joined(separator: " ")
            #expect(spec.contains(spaced), "Protocol.md lacks the vector \(spaced)")
        }
    }
}
