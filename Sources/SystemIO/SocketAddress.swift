#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An IPv4 or IPv6 socket address (with scope id for link-local IPv6), hashable so it can key
/// per-controller bookkeeping. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) print as IPv4.
package struct SocketAddress: Hashable, Sendable {
    package enum Family: Sendable { case inet, inet6 }
    /// The raw sockaddr bytes (sockaddr_in or sockaddr_in6), inline: no allocation per address,
    /// and equality and hashing are a few word compares (the receiver keys every datagram's
    /// source by it).
    let storage: RawSockAddr

    package var family: Family {
        storage.withUnsafeBytes { $0.load(as: sa_family_t.self) } == sa_family_t(AF_INET6) ? .inet6 : .inet
    }

    init(raw: UnsafeRawPointer, length: Int) {
        storage = RawSockAddr(UnsafeRawBufferPointer(start: raw, count: length))
    }

    package var port: UInt16 {
        storage.withUnsafeBytes { raw in
            family == .inet6 ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                             : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The host part as text: `127.0.0.1`, `::1`, `fe80::1%eth0`.
    package var host: String {
        storage.withUnsafeBytes { raw -> String in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if family == .inet {
                var a = raw.load(as: sockaddr_in.self).sin_addr
                inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
                return CString.string(text)
            }
            let sa6 = raw.load(as: sockaddr_in6.self)
            var a = sa6.sin6_addr
            let b = withUnsafeBytes(of: &a) { Array($0) }
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
                return "\(b[12]).\(b[13]).\(b[14]).\(b[15])"
            }
            inet_ntop(AF_INET6, &a, &text, socklen_t(text.count))
            var s = CString.string(text)
            if sa6.sin6_scope_id != 0 {
                var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
                if if_indextoname(sa6.sin6_scope_id, &name) != nil {
                    s += "%" + CString.string(name)
                } else {
                    s += "%\(sa6.sin6_scope_id)"
                }
            }
            return s
        }
    }

    /// The raw sockaddr for a C call (e.g. `sendto` from a signal handler, which cannot use Swift
    /// wrappers); the pointer is valid only inside `body`.
    package func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        storage.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// Resolves `host` (a name, an IPv4 or IPv6 literal, `fe80::1%eth0`) to UDP addresses.
    /// An empty or `*` host means the wildcard address (for binding).
    package static func resolve(host: String, port: UInt16, passive: Bool = false) throws(AddressError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        if passive { hints.ai_flags = AI_PASSIVE }
        var list: UnsafeMutablePointer<addrinfo>?
        let node = host.isEmpty || host == "*" ? nil : host
        let rc = getaddrinfo(node, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw AddressError(host: host, port: port, reason: CString.string(gai_strerror(rc)))
        }
        defer { freeaddrinfo(first) }
        var out: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let node = cursor {
            if let sa = node.pointee.ai_addr {
                let a = SocketAddress(raw: sa, length: Int(node.pointee.ai_addrlen))
                if !out.contains(a) { out.append(a) }
            }
            cursor = node.pointee.ai_next
        }
        return out
    }

    /// Parses `HOST:PORT`, `[IPv6]:PORT` and `[fe80::1%eth0]:PORT` and resolves it; IPv4 first.
    package static func resolve(_ hostPort: String) throws(AddressError) -> SocketAddress {
        guard let (host, port) = split(hostPort) else {
            throw AddressError(host: hostPort, port: 0, reason: "expected HOST:PORT, [IPv6]:PORT or IPv4:PORT")
        }
        let all = try resolve(host: host, port: port)
        guard let best = all.first(where: { $0.family == .inet }) ?? all.first else {
            throw AddressError(host: host, port: port, reason: "no address")
        }
        return best
    }

    package static func split(_ hostPort: String) -> (String, UInt16)? {
        var host: Substring
        var portText: Substring
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return nil }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let rest = hostPort[hostPort.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = hostPort.lastIndex(of: ":") else { return nil }
            host = hostPort[..<colon]
            if host.contains(":") { return nil }   // bare IPv6 needs brackets
            portText = hostPort[hostPort.index(after: colon)...]
        }
        guard !host.isEmpty, let port = UInt16(portText), port != 0 else { return nil }
        return (String(host), port)
    }
}

extension SocketAddress: CustomStringConvertible {
    /// `127.0.0.1:5000` or `[::1]:5000`.
    package var description: String {
        let h = host
        return h.contains(":") ? "[\(h)]:\(port)" : "\(h):\(port)"
    }
}

package struct AddressError: Error, Hashable, Sendable, CustomStringConvertible {
    package let host: String
    package let port: UInt16
    package let reason: String
    package var description: String { "cannot resolve \(host)\(port == 0 ? "" : ":\(port)"): \(reason)" }
}

/// C strings to Swift, without the deprecated `String(cString:)` on arrays.
enum CString {
    static func string(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }
}

/// Up to 32 bytes of a sockaddr (sockaddr_in6 has 28), zero-padded, and their count.
struct RawSockAddr: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var count: UInt8 = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        let n = min(bytes.count, 32)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(n))) }
        count = UInt8(n)
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        Swift.withUnsafeBytes(of: words) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
    }

    static func == (a: RawSockAddr, b: RawSockAddr) -> Bool {
        a.words == b.words && a.count == b.count
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        // An IPv4 address (16 bytes) leaves the last two words zero: not hashed (the receiver
        // hashes every datagram's source twice).
        if count > 16 {
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
        hasher.combine(count)
    }
}
