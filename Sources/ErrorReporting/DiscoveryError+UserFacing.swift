import Discovery

/// The one stderr line and exit status for discovery failures (README "Exit codes").
extension DiscoveryError {
    /// The one line for the person at the terminal, with the exit status. `fallback` is the way
    /// round discovery the command offers (`--peer HOST:PORT` for a controller, `--no-advertise`
    /// for a receiver).
    package func userFacing(fallback: String = "--peer HOST:PORT") -> UserFacingError {
        switch self {
        case .noResponder:
            UserFacingError("no mDNS responder is running — start avahi-daemon, or use \(fallback)", status: .noMDNSDaemon)
        default:
            UserFacingError("discovery: \(description)", status: .failure)
        }
    }
}
