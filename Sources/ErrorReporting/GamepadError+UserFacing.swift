public import Gamepad

/// The one stderr line and exit status for each gamepad failure (README "Exit codes").
extension GamepadError {
    /// A refused mapping line is a configuration error (exit 2); SDL not starting is a device
    /// problem (exit 3).
    public var userFacing: UserFacingError {
        switch self {
        case .config(let error):
            return error.userFacing
        case .sdl:
            return UserFacingError("\(description) (is libsdl2 installed? run scripts/setup.sh)", status: .deviceUnavailable)
        case .busy, .system, .closed:
            return UserFacingError(description, status: .failure)
        }
    }
}

extension GamepadSelectorError {
    /// A selector that does not parse is a command-line mistake (exit 64).
    public var userFacing: UserFacingError { UserFacingError(description, status: .usage) }
}
