/// Why a board could not be used: one line naming the device, the cause and the fix, e.g.
/// `serial:/dev/ttyACM0: permission denied (add your user to the dialout group, then log in again)`.
package struct BoardLinkError: Error, CustomStringConvertible, Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        /// The `--board` text does not parse.
        case badSpec
        /// The memory-map profile is unusable (an address outside the map, two roles on one address).
        case badProfile
        /// The device cannot be opened: missing, no permission, busy, no sound devices here.
        case deviceUnavailable
        /// The device went away: end of file, I/O error, hang-up.
        case lost
        /// The board did not answer in time.
        case noReply
        /// The board answered something else than the protocol says (or rejected the command).
        case protocolError
    }

    package let kind: Kind
    /// `serial:/dev/ttyACM0`, `midi:hw:1,0,0`, `sim` (or the bad spec as given).
    package let device: String
    /// The whole line.
    package let message: String

    package init(_ kind: Kind, device: String, _ message: String) {
        self.kind = kind
        self.device = device
        self.message = message
    }

    /// The device could not be opened (an exit status of "device unavailable").
    package var isDeviceUnavailable: Bool { kind == .deviceUnavailable || kind == .lost }

    package var description: String { message }

    /// The message without the leading `device: `.
    package var cause: String {
        message.hasPrefix(device + ": ") ? String(message.dropFirst(device.count + 2)) : message
    }
}
