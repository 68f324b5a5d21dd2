import Console
import Discovery

extension BrowseListing {
    /// Writes one listing line to stdout at once (unbuffered), e.g. the receivers a command lists
    /// before it ends with an ambiguous-receiver failure.
    package static func writeLine(_ line: String) { StandardOutput.write(line + "\n") }
}
