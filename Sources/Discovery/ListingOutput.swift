/// Where the browse and advertise loops put what they show: listing lines on stdout, a live
/// status line and one-line problems on stderr. Discovery prints nothing itself; the CLI hands
/// in the terminal.
package protocol ListingOutput: Sendable {
    /// One listing line on stdout, written whole, with the status line out of its way.
    func line(_ text: String)
    /// Replaces the live status text; `force` draws it now even if the last draw was recent.
    func status(_ text: String, force: Bool)
    /// Erases the status line (before the final listing, and at the end).
    func clearStatus()
    /// One line on stderr.
    func problem(_ text: String)
}
