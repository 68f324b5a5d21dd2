import ALSAMIDI
import SerialTTY

/// A device that may be a board, with the spec that opens it.
package struct BoardCandidate: Hashable, Sendable {
    package let spec: BoardSpec
    /// `= /dev/programland 2341:8036 Arduino LLC Arduino Leonardo`, `Arduino Leonardo: MIDI 1 (in+out)`.
    package let details: String
}

package enum BoardCandidates {
    /// Serial ttyACM/ttyUSB devices (with USB ids from sysfs), then ALSA rawmidi devices.
    package static func list() -> [BoardCandidate] {
        var out: [BoardCandidate] = []
        for device in SerialDevices.list() {
            // The udev rule's stable names first (`= /dev/programland`): the spec to put in a config.
            let stable = StableNames.links(to: device.path).map { "= \($0)" }
            let details = (stable + [device.usbID, device.product].compactMap { $0 }).joined(separator: " ")
            out.append(BoardCandidate(spec: .serial(path: device.path, baud: BaudRate.default),
                                      details: details.isEmpty ? "serial device" : details))
        }
        for device in RawMIDIDevices.list() {
            let directions = [device.hasInput ? "in" : nil, device.hasOutput ? "out" : nil].compactMap { $0 }.joined(separator: "+")
            let name = [device.cardName, device.subdeviceName.isEmpty ? device.deviceName : device.subdeviceName]
                .filter { !$0.isEmpty }.joined(separator: ": ")
            out.append(BoardCandidate(spec: .midi(device: device.name), details: "\(name) (\(directions))"))
        }
        return out
    }
}
