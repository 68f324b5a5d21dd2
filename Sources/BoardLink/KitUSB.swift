/// The USB ids the programland kit shows up with: its firmware is built for the Arduino
/// Leonardo (an ATmega32U4 with native USB; the kit's own board is a Pro Micro 5V/16 MHz
/// flashed as a Leonardo), so it enumerates as a Leonardo — or as the board it was built for.
///
/// `packaging/70-analog-remote.rules` gives each of these `/dev/programland` (and
/// `/dev/programland-SERIAL`); `UdevRuleTests` keeps the two lists equal.
package enum KitUSB {
    /// `vendor:product`, lower-case hex as sysfs writes them.
    package static let ids: Set<String> = [
        "2341:8036",  // Arduino LLC, Leonardo
        "2a03:8036",  // Arduino SRL (arduino.org), Leonardo
        "2341:8037",  // Arduino LLC, Micro (same chip, same firmware)
        "1b4f:9206",  // SparkFun Pro Micro 5V/16 MHz with SparkFun's board files
    ]

    /// The stable name the udev rule gives the kit.
    package static let stableName = "programland"
}
