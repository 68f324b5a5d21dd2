import ConfigFile

/// The one stderr line and exit status for every config file (README "Exit codes").
extension ConfigFileError {
    /// One line naming the file and key; exit 2.
    package var userFacing: UserFacingError { UserFacingError(description, status: .badConfiguration) }
}
