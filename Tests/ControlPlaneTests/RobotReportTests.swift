import ControlWire
import Foundation
import ControlPlane
import RemoteWire
import TestSupport
import Testing

/// vectors/control-messages.json `robot_states` (Protocol.md §7.9): the robot-state report.
struct RobotStateVectors: Decodable {
    struct Valid: Decodable { let name, hex, board, text: String; let revision: UInt32; let state, detail: UInt8 }
    struct Rejected: Decodable { let name, hex: String }
    struct Section: Decodable { let valid: [Valid]; let rejected: [Rejected] }
    let robotStates: Section
    enum CodingKeys: String, CodingKey { case robotStates = "robot_states" }

    static func load() throws -> Section {
        try JSONDecoder().decode(RobotStateVectors.self,
                                 from: Data(contentsOf: Paths.repositoryFile("vectors/control-messages.json"))).robotStates
    }
}

@Suite struct RobotReportTests {
    /// Each vector decodes to a report whose fields are the vector's, and re-encodes to the same
    /// datagram under the same header; each appears in Protocol.md.
    @Test func validVectorsRoundTrip() throws {
        let file = try RobotStateVectors.load()
        #expect(file.valid.count >= 9)
        var seen = Set<UInt8>()
        for v in file.valid {
            let bytes = try #require(Hex.bytes(v.hex))
            let datagram = try ControlDatagram.decode(bytes)
            #expect(datagram.header.type == .robotState && datagram.header.sequence == 0, "\(v.name)")
            guard case .robotState(let report) = try ControlMessage.decode(type: .robotState, payload: datagram.payload) else {
                Issue.record("\(v.name): not a robot-state"); continue
            }
            #expect(report.revision == v.revision && report.state.code == v.state && report.board.text == v.board, "\(v.name)")
            switch report.state {
            case .failsafe(let cause): #expect(cause.rawValue == v.detail, "\(v.name)")
            case .refused(let reason, let text): #expect(reason.rawValue == v.detail && text.text == v.text, "\(v.name)")
            case .owned(let text), .boardMissing(let text): #expect(text.text == v.text && v.detail == 0, "\(v.name)")
            default: #expect(v.detail == 0 && v.text.isEmpty, "\(v.name)")
            }
            seen.insert(v.state)
            let header = ControlHeader(type: .robotState, connection: 0x1234_5678)
            #expect(Hex.string(ControlDatagram(header: header, payload: report.encodePayload()[...]).encode()) == v.hex, "\(v.name)")
        }
        #expect(seen == Set(1...7), "every state has a vector")
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for v in file.valid { #expect(spec.contains(v.hex), "Protocol.md lacks the robot-state vector \(v.name)") }
        for v in file.rejected { #expect(spec.contains(v.hex), "Protocol.md lacks the refused robot-state vector \(v.name)") }
    }

    @Test func rejectedVectorsAreRefused() throws {
        for v in try RobotStateVectors.load().rejected {
            #expect(throws: ControlMessageError.self, "\(v.name)") {
                let d = try ControlDatagram.decode(Hex.bytes(v.hex) ?? [])
                _ = try ControlMessage.decode(type: d.header.type, payload: d.payload)
            }
        }
    }

    /// The coordination file's example (robot-state-spec.md) is the first vector: byte by byte.
    @Test func byteByByteExample() {
        let report = RobotReport(revision: 7, state: .failsafe(.silence), board: "programland kit")
        #expect(report.encodePayload() == [0, 0, 0, 7, 2, 2, 15] + Array("programland kit".utf8) + [0])
        #expect(report.headline == "FAILSAFE (silence): centre to resume")
    }

    @Test func revisionsCompareBySerialArithmetic() {
        let a = RobotReport(revision: 0xFFFF_FFFF, state: .driving, board: "")
        var b = a
        b.revision = 1
        #expect(b.isNewer(than: a) && !a.isNewer(than: b))
        #expect(!a.isNewer(than: a))
    }
}
