import MIDIControl

/// The one stderr line and exit status for each MIDI input failure (README "Exit codes").
extension MIDIDeviceError {
    /// The device could not be opened (no /dev/snd, no such port, permission): exit 3.
    package var userFacing: UserFacingError { UserFacingError(description, status: .deviceUnavailable) }
}
