/// What the kit's firmware senses, as one read of its memory map returns it: the block
/// 0x07…0x11, rewritten by the firmware on every pass of its loop.
///
/// ```
///  0x07  0x08  0x09  0x0a  0x0b  0x0c  0x0d  0x0e  0x0f  0x10  0x11
/// +-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+
/// |temp | hum |buzzer tone|sens1|sens2|sens3|sens4|LED1 |LED2 |switch
/// +-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+
///  Int8  0…100  (ours)       0…255 each (analog input >> 2)  (ours) 0/1
/// ```
/// One `R 07 0b` (11 bytes, count in hex) reads it; the bytes the receiver writes itself
/// (buzzer, LEDs) ride along and are not kept.
package struct SensorBlock: Sendable, Hashable {
    /// The first address of the block and its length.
    package static let address: UInt8 = MemoryMapProfile.Address.temperature
    package static let count: UInt8 = MemoryMapProfile.Address.switchValue - MemoryMapProfile.Address.temperature + 1
    /// The one command that reads the block: `R 07 0b`.
    package static let read = BoardCommand.read(address: address, count: count)
    /// The highest address a board needs for the block (its map must be larger).
    package static let lastAddress: UInt8 = MemoryMapProfile.Address.switchValue

    /// Sensors 1–4 (0x0b–0x0e): the analog inputs A0–A3, 0…255.
    package var sensors: [UInt8]
    /// The switch (0x11): 1 while pressed; the raw byte.
    package var switchValue: UInt8
    /// The BME280's temperature (0x07), whole °C, two's complement.
    package var temperature: Int8
    /// The BME280's relative humidity (0x08), whole %RH.
    package var humidity: UInt8

    package init(sensors: [UInt8] = [0, 0, 0, 0], switchValue: UInt8 = 0, temperature: Int8 = 0, humidity: UInt8 = 0) {
        precondition(sensors.count == 4, "SensorBlock: four sensors")
        self.sensors = sensors
        self.switchValue = switchValue
        self.temperature = temperature
        self.humidity = humidity
    }

    /// The block from the bytes of `R 07 0b`; nil unless exactly 11 bytes came back (a board
    /// whose map ends inside the block answers fewer).
    package init?(readReply values: [UInt8]) {
        guard values.count == Int(Self.count) else { return nil }
        let base = Int(Self.address)
        func at(_ address: UInt8) -> UInt8 { values[Int(address) - base] }
        let s = MemoryMapProfile.Address.sensor1
        self.init(sensors: [at(s), at(s + 1), at(s + 2), at(s + 3)], switchValue: at(MemoryMapProfile.Address.switchValue),
                  temperature: Int8(bitPattern: at(MemoryMapProfile.Address.temperature)),
                  humidity: at(MemoryMapProfile.Address.humidity))
    }

    /// True when the switch byte is not 0.
    package var isSwitchPressed: Bool { switchValue != 0 }
}
