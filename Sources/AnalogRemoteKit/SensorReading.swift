import BoardProtocol

/// What a robot senses: the kit's four analog sensors, its switch and its BME280 (Protocol.md
/// §7.9.1), as ``RobotController/sensors`` delivers it and ``RobotReceiver/report(_:)`` takes it.
public struct SensorReading: Hashable, Sendable {
    /// Sensors 1–4 (the kit's analog inputs A0–A3), each 0…255.
    public var sensors: [Int]
    /// The robot's switch is held down.
    public var switchPressed: Bool
    /// The temperature, whole °C (−128…127).
    public var temperature: Int
    /// The relative humidity, whole % (0…100).
    public var humidity: Int

    /// Values outside their ranges are clamped; missing sensors read 0, extra ones are ignored.
    public init(sensors: [Int], switchPressed: Bool = false, temperature: Int = 0, humidity: Int = 0) {
        self.sensors = (0..<4).map { $0 < sensors.count ? max(0, min(255, sensors[$0])) : 0 }
        self.switchPressed = switchPressed
        self.temperature = max(-128, min(127, temperature))
        self.humidity = max(0, min(100, humidity))
    }

    init(_ block: SensorBlock) {
        self.init(sensors: block.sensors.map(Int.init), switchPressed: block.isSwitchPressed,
                  temperature: Int(block.temperature), humidity: Int(block.humidity))
    }

    var block: SensorBlock {
        SensorBlock(sensors: sensors.map { UInt8(clamping: $0) }, switchValue: switchPressed ? 1 : 0,
                    temperature: Int8(clamping: temperature), humidity: UInt8(clamping: humidity))
    }
}
