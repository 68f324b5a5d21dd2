/// Why a call of this library failed: a ``Code`` to switch on, and one line that says what is
/// wrong and how to fix it (GameKit's `GKSessionError`, MultipeerConnectivity's `MCError`).
public struct AnalogRemoteError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        /// An argument is unusable (an address that does not parse, an empty display name, a
        /// session ID that is too long); nothing was sent.
        case invalidArgument
        /// A name or address could not be resolved, or no socket could be opened.
        case networkUnavailable
        /// There is no mDNS responder (Avahi) to find receivers or peers by name; use an address.
        case discoveryUnavailable
        /// The receiver or peer said no (a pairing code is required or wrong, another
        /// controller drives, another session).
        case refused
        /// Nothing answered in time.
        case timedOut
        /// The peer's host answered that nothing listens there (ICMP port unreachable, or the
        /// host or network unreachable): told at once instead of after the timeout.
        case peerUnreachable
        /// The message is larger than the mode allows (64 KiB reliable, 943 bytes unreliable).
        case dataTooBig
        /// The peer is not connected (never was, or left).
        case notConnected
        /// The session or controller was closed.
        case closed
        /// The board or the receiver could not be set up.
        case receiverUnavailable
    }

    public let code: Code
    /// One line: what is wrong, and how to fix it.
    public let description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
