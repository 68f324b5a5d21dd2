extension SocketAddress {
    /// `HOST`, `IPv4`, `[IPv6]` or a bare IPv6 address without a port get `port`; a text that
    /// already has a port is returned as it is. nil when the text cannot be a host, with or
    /// without a port (`host:`, `host:abc`, `host:0`, empty).
    package static func withDefaultPort(_ text: String, port: UInt16) -> String? {
        if split(text) != nil { return text }
        guard !text.isEmpty, !text.contains(where: \.isWhitespace) else { return nil }
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count > 2 else { return nil }
            return "\(text):\(port)"
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 0 { return "\(text):\(port)" }
        if colons >= 2 { return "[\(text)]:\(port)" }   // a bare IPv6 address (it cannot carry a port)
        return nil
    }
}
