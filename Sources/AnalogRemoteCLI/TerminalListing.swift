import Console
import Discovery

/// The terminal as the discovery loops' output: listing lines on stdout (unbuffered, with the
/// status line cleared first), the status line and problems on stderr.
struct TerminalListing: ListingOutput {
    let statusLine: StatusLine

    func line(_ text: String) {
        statusLine.clear()
        StandardOutput.write(text + "\n")
    }

    func status(_ text: String, force: Bool) { statusLine.update(text, force: force) }
    func clearStatus() { statusLine.clear() }
    func problem(_ text: String) { StandardError.write(text + "\n") }
}
