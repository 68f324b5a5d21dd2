import Gamepad

/// The one stderr line and exit status for each gamepad failure (README "Exit codes").
extension GamepadError {
    /// A refused mapping line is a configuration error (exit 2); SDL missing or not starting is
    /// a device problem (exit 3).
    package var userFacing: UserFacingError {
        switch self {
        case .config(let error):
            return error.userFacing
        case .sdl:
            return UserFacingError("\(description) (is libsdl2 installed? run scripts/setup.sh)", status: .deviceUnavailable)
        case .libraryMissing:
            // A robot's package only suggests SDL2 (loaded at run time): one line, and the package that fixes it.
            return UserFacingError("\(description) — gamepads need SDL2: sudo apt-get install libsdl2-2.0-0", status: .deviceUnavailable)
        case .busy, .system, .closed:
            return UserFacingError(description, status: .failure)
        }
    }
}

extension GamepadSelectorError {
    /// A selector that does not parse is a command-line mistake (exit 64).
    package var userFacing: UserFacingError { UserFacingError(description, status: .usage) }
}
