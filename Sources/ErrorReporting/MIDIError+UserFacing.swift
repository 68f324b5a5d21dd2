public import MIDIControl

/// The one stderr line and exit status for each MIDI input failure (README "Exit codes").
extension MIDIConfigError {
    /// One line naming the file and key; exit 2.
    public var userFacing: UserFacingError { UserFacingError(description, status: .badConfiguration) }
}

extension MIDIDeviceError {
    /// The device could not be opened (no /dev/snd, no such port, permission): exit 3.
    public var userFacing: UserFacingError { UserFacingError(description, status: .deviceUnavailable) }
}
