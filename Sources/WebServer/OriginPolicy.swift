/// Which web pages may open this server's WebSockets (every path: the phone page's `/ws` and any
/// socket added later, such as a teacher's).
///
/// A browser puts the origin of the page that opens a WebSocket in the `Origin` header; the
/// browser, not the page, writes it, so a page of another site cannot pass for ours. Allowed are
/// the server's own origins — its scheme and port with a host it answers to: each address it
/// listens on (every local IPv4 address for `0.0.0.0`), `localhost` when it listens on loopback,
/// and the host's name (`NAME` and `NAME.local`) — plus each `--allow-origin`. A request without
/// `Origin` is refused too: browsers always send it, and a script that leaves it out gains nothing.
///
/// Trap: the `Host` header is no proof. A page at `evil.example` whose name resolves to our
/// address (DNS rebinding) sends `Host` and `Origin` that agree with each other, so "Origin equals
/// Host" would let it in; the list here is built from the server's own addresses and names only.
package struct OriginPolicy: Sendable {
    /// An origin as browsers serialise it (RFC 6454 §6.2), compared exactly: scheme and host in
    /// lower case, the port always explicit.
    package struct Origin: Hashable, Sendable, CustomStringConvertible {
        package var scheme: String
        package var host: String
        package var port: Int

        package init(scheme: String, host: String, port: Int) {
            self.scheme = scheme.lowercased()
            self.host = host.lowercased()
            self.port = port
        }

        /// `scheme://host[:port]` (a trailing `/` is tolerated); nil for anything else, also `null`.
        package init?(_ text: String) {
            var rest = Substring(text)
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard let sep = rest.firstRange(of: "://") else { return nil }
            let scheme = rest[..<sep.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { return nil }
            let authority = rest[sep.upperBound...]
            guard !authority.isEmpty, !authority.contains(where: { "/?#@ ".contains($0) }) else { return nil }
            var host = authority
            var port = scheme == "https" ? 443 : 80
            // `[v6]:port`, `[v6]`, `host:port`, `host`.
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                host = authority[...close]
                let after = authority[authority.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                    port = p
                }
            } else if let colon = authority.lastIndex(of: ":") {
                guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else { return nil }
                host = authority[..<colon]
                port = p
            }
            guard !host.isEmpty else { return nil }
            self.init(scheme: scheme, host: String(host), port: port)
        }

        package var description: String { "\(scheme)://\(host):\(port)" }
    }

    /// `http` or `https`: what this server speaks.
    package let scheme: String
    /// The TCP port the server is bound to (known only once it is bound with `--port 0`).
    let port: @Sendable () -> Int
    /// The host names and addresses this server answers to, asked at each check (an address
    /// can come and go while the server runs).
    let hosts: @Sendable () -> [String]
    /// `--allow-origin`.
    package let extra: Set<Origin>

    package init(scheme: String, port: @escaping @Sendable () -> Int, hosts: @escaping @Sendable () -> [String], extra: Set<Origin> = []) {
        self.scheme = scheme
        self.port = port
        self.hosts = hosts
        self.extra = extra
    }

    /// Nil when a WebSocket from `origin` (the header's value, nil when absent) may open; else
    /// the one line the refusal says, naming the way out.
    package func refusal(_ origin: String?) -> String? {
        guard let origin, !origin.isEmpty else {
            return "a WebSocket needs an Origin header (browsers send one): open the page this server serves"
        }
        guard let parsed = Origin(origin) else {
            return "origin \"\(origin.prefix(100))\" is not allowed: open the page this server serves"
        }
        if extra.contains(parsed) { return nil }
        let port = port()
        if parsed.scheme == scheme, parsed.port == port, hosts().contains(where: { $0.lowercased() == parsed.host }) { return nil }
        return "origin \(parsed) is not allowed: open the page this server serves, or start web with --allow-origin \(parsed.scheme)://\(parsed.host):\(parsed.port)"
    }
}
