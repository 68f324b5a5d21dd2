import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import TestSupport
import Testing

/// vectors/control-messages.json `datagrams` (Protocol.md §7.13): unreliable application data.
@Suite struct DatagramMessageTests {
    struct Vectors: Decodable {
        struct Valid: Decodable { let name, hex, text: String; let channel: UInt8 }
        struct Rejected: Decodable { let name, hex: String }
        struct Set: Decodable { let valid: [Valid]; let rejected: [Rejected] }
        let datagrams: Set

        static func load() throws -> Set {
            try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/control-messages.json"))).datagrams
        }
    }

    @Test func validVectorsDecodeAndEncodeByteForByte() throws {
        for vector in try Vectors.load().valid {
            let bytes = try #require(Hex.bytes(vector.hex), "\(vector.name)")
            let datagram = try ControlDatagram.decode(bytes)
            #expect(datagram.header.type == .datagram && datagram.header.sequence == 0, "\(vector.name)")
            let message = try ControlMessage.decode(type: .datagram, payload: datagram.payload)
            #expect(message == .datagram(channel: vector.channel, bytes: Array(vector.text.utf8)), "\(vector.name)")
            let channel = ReliableChannel(connection: 0x1234_5678)
            #expect(channel.unreliable(message) == bytes, "\(vector.name)")
        }
    }

    @Test func rejectedVectorsAreRefused() throws {
        for vector in try Vectors.load().rejected {
            let bytes = try #require(Hex.bytes(vector.hex), "\(vector.name)")
            let decoded = try? ControlDatagram.decode(bytes)
            let message = decoded.flatMap { try? ControlMessage.decode(type: $0.header.type, payload: $0.payload) }
            #expect(message == nil, "\(vector.name) was accepted")
        }
    }

    /// One byte over the limit is refused (the datagram would exceed 1 KB under a version-2 header).
    @Test func overTheLimitIsRefused() {
        let limit = ControlMessage.datagramLimit
        #expect(limit == 943)
        #expect((try? ControlMessage.decode(type: .datagram, payload: ([2] + [UInt8](repeating: 0, count: limit))[...])) != nil)
        #expect((try? ControlMessage.decode(type: .datagram, payload: ([2] + [UInt8](repeating: 0, count: limit + 1))[...])) == nil)
    }
}
