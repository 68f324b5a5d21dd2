import Discovery
import SystemIO

/// The checks every initialiser makes of the text it is given, with messages for library code
/// (no command-line flags in them): a bad argument is `.invalidArgument`, thrown before anything
/// is sent; a well-formed name that does not resolve is `.networkUnavailable`.
enum Arguments {
    /// `text` as a session ID; `parameter` names the argument in the message.
    static func session(_ text: String, parameter: String) throws(AnalogRemoteError) -> SessionID {
        do {
            return try SessionID(text)
        } catch {
            switch error {
            case .empty:
                throw AnalogRemoteError(.invalidArgument, "\(parameter) is empty: give any text, the same on every peer (e.g. \"class-7b\")")
            case .tooLong(let n):
                throw AnalogRemoteError(.invalidArgument, "\(parameter) is \(n) bytes of UTF-8: give at most \(SessionID.maximumByteCount)")
            }
        }
    }

    /// `text` (`HOST:PORT`, `[IPv6]:PORT`) parsed, then resolved; IPv4 first.
    static func address(_ text: String) throws(AnalogRemoteError) -> SocketAddress {
        guard SocketAddress.split(text) != nil else {
            throw AnalogRemoteError(.invalidArgument, "\(text.debugDescription) is not an address: give HOST:PORT or [IPv6]:PORT, e.g. \"robot.local:27183\" (the port is required, 1…65535)")
        }
        do {
            return try SocketAddress.resolve(text)
        } catch {
            throw AnalogRemoteError(.networkUnavailable, "\(text): cannot resolve \(error.host): \(error.reason) (check the name, or give an IP address and port)")
        }
    }
}
