#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// One address of a host name, asked of avahi-daemon over its local "simple protocol" socket
/// (the one nss-mdns uses): connect, send `RESOLVE-HOSTNAME-IPV4 host` (or `-IPV6`), read one
/// line, `+ IFINDEX PROTO HOST ADDRESS` or `-ERRNO message`; the daemon closes after it. The
/// ``LoopCore`` polls the socket with its operations' (``LoopCore/lookUpHost(_:ipv6:timeout:handler:)``).
///
/// Why here: with Avahi's compat layer an address is a `DNSServiceQueryRecord`, which opens a
/// D-Bus connection of its own (several round trips) before its first answer; this is one
/// round trip answered from the daemon's cache (the resolve that named the host has just
/// filled it). A one-shot answer suits only lookups that end once resolved
/// (``SessionBrowser/Lookups/once``); anything that fails here — no such socket (another
/// responder), a refusal, no answer within the timeout — falls back to the record query.
enum AvahiHostLookup {
    /// Where avahi-daemon listens (its compile-time path; older builds used /var/run).
    static let socketPaths = ["/run/avahi-daemon/socket", "/var/run/avahi-daemon/socket"]

    struct Answer: Equatable, Sendable {
        var interface: UInt32
        /// 1 (A) or 28 (AAAA), as a record query would report it.
        var type: UInt16
        var address: [UInt8]
    }

    /// The request line for `host`, or nil when the daemon's parser would not take the name
    /// whole (it reads one whitespace-free word of at most 1013 bytes).
    static func request(host: String, ipv6: Bool) -> String? {
        guard !host.isEmpty, host.utf8.count <= 1013,
              !host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) else { return nil }
        return (ipv6 ? "RESOLVE-HOSTNAME-IPV6 " : "RESOLVE-HOSTNAME-IPV4 ") + host + "\n"
    }

    /// The daemon's answer line (without its newline), or nil for a refusal or anything else.
    static func parse(_ line: String, ipv6: Bool) -> Answer? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 5, fields[0] == "+", let interface = Int32(fields[1]), interface > 0,
              let proto = Int32(fields[2]), proto == (ipv6 ? 1 : 0) else { return nil }
        let text = String(fields[4])
        if ipv6 {
            var a = in6_addr()
            guard inet_pton(AF_INET6, text, &a) == 1 else { return nil }
            return Answer(interface: UInt32(interface), type: 28, address: withUnsafeBytes(of: &a) { Array($0) })
        }
        var a = in_addr()
        guard inet_pton(AF_INET, text, &a) == 1 else { return nil }
        return Answer(interface: UInt32(interface), type: 1, address: withUnsafeBytes(of: &a) { Array($0) })
    }

    /// Connects to the daemon's socket and sends the request for `host`, without blocking;
    /// returns the connected socket (close it when done), or nil when there is no such socket
    /// or it refuses the connection. The answer is one line on that socket (``parse(_:ipv6:)``).
    static func ask(host: String, ipv6: Bool) -> Int32? {
        guard let line = request(host: host, ipv6: ipv6) else { return nil }
        for path in socketPaths {
            if let fd = send(line, to: path) { return fd }
        }
        return nil
    }

    private static func send(_ line: String, to path: String) -> Int32? {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard let fd = try? Syscall.call("socket(AF_UNIX)", { socket(AF_UNIX, type, 0) }) else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { close(fd); return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        // A local stream connect completes at once or fails (EAGAIN: the daemon's backlog is
        // full; then the record query is the way).
        let connected = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                try? Syscall.call("connect") { connect(fd, sa, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        let request = Array(line.utf8)
        // The request is far below the socket's buffer: one send, whole or not at all.
        guard connected != nil,
              (try? Syscall.call("send") { request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }) == request.count
        else { close(fd); return nil }
        return fd
    }
}
