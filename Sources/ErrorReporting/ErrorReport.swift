import ConfigFile
import Discovery
import Gamepad
import MIDIControl
import SystemIO

/// The CLI's side of errors: adapters and roles throw typed errors; this module alone turns them
/// into the one stderr line and the exit status (README "Exit codes").
package enum ErrorReport {
    /// A ``UserFacingError`` as it is, a role's ``CommandFailure`` or an adapter's typed error
    /// mapped; nil for anything else.
    /// `discoveryFallback` is the way round DNS-SD the command offers (`--peer HOST:PORT` for
    /// commands that find receivers, `--no-advertise` for those that announce one).
    package static func userFacing(_ error: any Error, discoveryFallback: String = "--peer HOST:PORT") -> UserFacingError? {
        switch error {
        case let e as UserFacingError: e
        case let e as CommandFailure: UserFacingError(e)
        case let e as DiscoveryError: e.userFacing(fallback: discoveryFallback)
        case let e as GamepadError: e.userFacing
        case let e as ConfigFileError: e.userFacing
        case let e as GamepadSelectorError: e.userFacing
        case let e as MIDIDeviceError: e.userFacing
        default: nil
        }
    }
}
