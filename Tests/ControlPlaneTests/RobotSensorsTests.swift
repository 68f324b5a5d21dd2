import BoardProtocol
import ControlWire
import Foundation
import RemoteWire
import TestSupport
import Testing

/// vectors/control-messages.json `robot_sensors` (Protocol.md §7.9): the robot-sensors report.
struct RobotSensorsVectors: Decodable {
    struct Valid: Decodable {
        let name, hex: String
        let sample: UInt32
        let sensors: [UInt8]
        let `switch`: UInt8
        let temperature: Int8
        let humidity: UInt8
    }
    struct Rejected: Decodable { let name, hex: String }
    struct Section: Decodable { let valid: [Valid]; let rejected: [Rejected] }
    let robotSensors: Section
    enum CodingKeys: String, CodingKey { case robotSensors = "robot_sensors" }

    static func load() throws -> Section {
        try JSONDecoder().decode(RobotSensorsVectors.self,
                                 from: Data(contentsOf: Paths.repositoryFile("vectors/control-messages.json"))).robotSensors
    }
}

@Suite struct RobotSensorsTests {
    @Test func validVectorsRoundTripAndAreInTheSpec() throws {
        let file = try RobotSensorsVectors.load()
        #expect(file.valid.count >= 3 && file.rejected.count >= 3)
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for v in file.valid {
            let datagram = try ControlDatagram.decode(try #require(Hex.bytes(v.hex)))
            #expect(datagram.header.type == .robotSensors && datagram.header.sequence == 0, "\(v.name)")
            guard case .robotSensors(let got) = try ControlMessage.decode(type: datagram.header.type, payload: datagram.payload) else {
                Issue.record("\(v.name): not robot-sensors"); continue
            }
            #expect(got.sample == v.sample && got.block.sensors == v.sensors && got.block.switchValue == v.switch
                    && got.block.temperature == v.temperature && got.block.humidity == v.humidity, "\(v.name)")
            let header = ControlHeader(type: .robotSensors, connection: 0x1234_5678)
            #expect(Hex.string(ControlDatagram(header: header, payload: got.encodePayload()[...]).encode()) == v.hex, "\(v.name)")
            #expect(spec.contains(v.hex), "Protocol.md lacks the robot-sensors vector \(v.name)")
        }
        for v in file.rejected { #expect(spec.contains(v.hex), "Protocol.md lacks the refused robot-sensors vector \(v.name)") }
    }

    @Test func rejectedVectorsAreRefused() throws {
        for v in try RobotSensorsVectors.load().rejected {
            #expect(throws: ControlMessageError.self, "\(v.name)") {
                let d = try ControlDatagram.decode(Hex.bytes(v.hex) ?? [])
                _ = try ControlMessage.decode(type: d.header.type, payload: d.payload)
            }
        }
    }

    /// The log's object and the status line's compact form, from the first vector.
    @Test func itReadsAsJSONAndCompactly() throws {
        let v = try #require(try RobotSensorsVectors.load().valid.first)
        let d = try ControlDatagram.decode(try #require(Hex.bytes(v.hex)))
        guard case .robotSensors(let s) = try ControlMessage.decode(type: .robotSensors, payload: d.payload) else {
            Issue.record("not robot-sensors"); return
        }
        #expect(s.json == #"{"sensor1":12,"sensor2":34,"sensor3":0,"sensor4":255,"switch":1,"temperature":-2,"humidity":40}"#)
        #expect(s.compact == "S 12 34 0 255 ● -2°C 40%")
        var later = s
        later.sample = 0
        #expect(later.isNewer(than: s) == false && s.isNewer(than: later))
    }
}
