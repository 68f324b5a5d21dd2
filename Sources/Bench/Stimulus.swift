import BoardProtocol
import Receiver
import RemoteWire

/// The states the latency runs alternate between, and the `W` line each one must produce.
///
/// Both states hold *forward* and tilt the other way, so every one changes both motor bytes
/// (0x22, 0x23 with the kit mapping: one `W 22 xxyy` line) and neither is resting; the resting
/// state primes the receiver (its failsafe starts tripped and waits for a resting state).
enum Stimulus {
    static let resting = ControllerState(angle: 0, buttons: [])
    static let states = [ControllerState(angle: 0.3, buttons: .forward), ControllerState(angle: -0.3, buttons: .forward)]
    /// The same states as `control --input stdin` lines.
    static let lines = ["0.3 forward\n", "-0.3 forward\n"]
    static let restingLine = "0 none\n"

    /// The line the board link sends for `state` after a change from the other state.
    static func expectedWrite(_ state: ControllerState) -> [UInt8] {
        let mapping = Mapping.kit
        let values = mapping.values(for: state)
        let left = mapping.drive.left.address, right = mapping.drive.right.address
        precondition(right == left &+ 1, "the kit mapping has the motors side by side")
        return BoardCommand.write(address: left, bytes: [values[left]!, values[right]!]).line
    }

    static let expectedWrites = states.map(expectedWrite)
}
