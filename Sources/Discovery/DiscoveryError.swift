import SystemIO

/// Why discovery could not start or keep going.
package enum DiscoveryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No mDNS responder answered: Avahi's compat layer returns kDNSServiceErr_Unknown (-65537)
    /// at once when avahi-daemon or the D-Bus system bus is not there (it has no dedicated
    /// "service not running" code).
    case noResponder(call: String)
    /// A DNS-SD call failed with another `DNSServiceErrorType`.
    case failed(call: String, code: Int32)
    /// The loop thread could not be set up (pipe, thread).
    case system(SystemError)
    /// A blocking call was made from inside a discovery handler (handlers run on the loop
    /// thread, which would wait for itself).
    case calledFromHandler(call: String)

    package static let unknownCode: Int32 = -65537

    package var description: String {
        switch self {
        case .noResponder:
            "no mDNS responder is running"
        case .failed(let call, let code):
            "\(call) failed: \(Self.name(of: code)) (\(code))"
        case .system(let e):
            "discovery: \(e)"
        case .calledFromHandler(let call):
            "\(call) called from inside a discovery handler (it would wait for itself)"
        }
    }

    /// Names from dns_sd.h, for messages.
    package static func name(of code: Int32) -> String {
        switch code {
        case 0: "no error"
        case -65537: "unknown (no daemon?)"
        case -65538: "no such name"
        case -65539: "no memory"
        case -65540: "bad parameter"
        case -65541: "bad reference"
        case -65542: "bad state"
        case -65543: "bad flags"
        case -65544: "unsupported"
        case -65545: "not initialized"
        case -65547: "already registered"
        case -65548: "name conflict"
        case -65549: "invalid"
        case -65551: "incompatible"
        case -65552: "bad interface index"
        case -65553: "refused"
        case -65554: "no such record"
        default: "error"
        }
    }
}
