import BoardProtocol

/// What the robot senses, for the controller that said hello (Protocol.md §7.9, control type
/// 0x14 `robot-sensors`, receiver → controller, unreliable): the kit's sensor block as the
/// receiver last read it from the board, on every change and at least once a second.
///
/// ```
///  0       1       2       3       4       5       6       7       8       9      10
/// +-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+
/// |        sample (UInt32)        |sensor1|sensor2|sensor3|sensor4|switch | temp  |humid. |
/// +-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+
/// ```
/// `sample` grows by one (wrapping) with every block the receiver sends as new; a repeat keeps
/// it. The other bytes are the board's raw bytes 0x0b–0x0e, 0x11, 0x07 (an Int8, °C) and 0x08
/// (%RH). Decoded exactly: 11 bytes, no more, no fewer.
package struct RobotSensors: Hashable, Sendable {
    package static let payloadSize = 11

    package var sample: UInt32
    package var block: SensorBlock

    package init(sample: UInt32, block: SensorBlock) {
        self.sample = sample
        self.block = block
    }

    /// Is `self` newer than `other` (32-bit serial arithmetic, RFC 1982)? Equal = a repeat.
    package func isNewer(than other: RobotSensors) -> Bool {
        sample != other.sample && (sample &- other.sample) < 0x8000_0000
    }

    package func encodePayload() -> [UInt8] {
        var w = ByteWriter()
        w.u32(sample)
        w.raw(block.sensors)
        w.u8(block.switchValue)
        w.u8(UInt8(bitPattern: block.temperature))
        w.u8(block.humidity)
        return w.bytes
    }

    package static func decode(_ payload: ArraySlice<UInt8>) throws(ControlMessageError) -> RobotSensors {
        var r = ByteReader(payload)
        let sample = try r.u32()
        let sensors = Array(try r.take(4))
        let switchValue = try r.u8()
        let temperature = Int8(bitPattern: try r.u8())
        let humidity = try r.u8()
        try r.expectEnd()
        return RobotSensors(sample: sample, block: SensorBlock(sensors: sensors, switchValue: switchValue,
                                                               temperature: temperature, humidity: humidity))
    }

    /// The compact form of a status line: `S 12 0 255 40 ● 21°C 45%` (the switch ● pressed, ○ not).
    package var compact: String {
        let b = block
        return "S \(b.sensors.map(String.init).joined(separator: " ")) \(b.isSwitchPressed ? "●" : "○") \(b.temperature)°C \(b.humidity)%"
    }

    /// The board's values by their names in logs and pages, in this order: `sensor1`…`sensor4`,
    /// `switch` (0/1), `temperature` (signed °C), `humidity` (%RH).
    package var fields: [(name: String, value: Int)] {
        let b = block
        return [("sensor1", Int(b.sensors[0])), ("sensor2", Int(b.sensors[1])), ("sensor3", Int(b.sensors[2])),
                ("sensor4", Int(b.sensors[3])), ("switch", Int(b.switchValue)), ("temperature", Int(b.temperature)),
                ("humidity", Int(b.humidity))]
    }

    /// The JSON object of logs and pages: `{"sensor1":12,"sensor2":0,"sensor3":255,"sensor4":40,"switch":1,"temperature":21,"humidity":45}`.
    package var json: String {
        "{" + fields.map { "\"\($0.name)\":\($0.value)" }.joined(separator: ",") + "}"
    }
}
