#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// `doctor`'s `mdns` check: does multicast DNS reach other machines? One query for
/// `_services._dns-sd._udp.local.` (every responder answers it) goes out on each interface with
/// multicast, from an ephemeral port, so responders answer by unicast to it (RFC 6762 §6.7);
/// the answers heard within ``listen`` say which machines' responders got it.
///
/// No answer from another machine proves nothing alone (no other machine may run one), so the
/// neighbour table is asked too: machines this one already talks to by unicast, none of whose
/// responders answers multicast, is what a network that filters multicast looks like.
package enum MDNSProbe {
    package static let listen: Duration = .seconds(1)

    /// What one probe found.
    package struct Findings: Sendable, Equatable {
        /// Addresses that answered, other than this machine's own.
        package var answeredBy: Set<String>
        /// Other machines in the neighbour table (IPv4, complete entries).
        package var neighbours: Set<String>
        /// Why no query could be sent, if none could.
        package var sendError: String?

        package init(answeredBy: Set<String>, neighbours: Set<String>, sendError: String? = nil) {
            self.answeredBy = answeredBy
            self.neighbours = neighbours
            self.sendError = sendError
        }
    }

    /// What to do when mDNS does not get through: name the robots by address.
    package static let byAddress = "list the robots by address: web --session ID --peer HOST:PORT, stop-all --session ID --peer HOST, control --peer HOST"

    /// The check's line for these findings.
    package static func check(_ f: Findings) -> DoctorCheck {
        if !f.answeredBy.isEmpty {
            let n = f.answeredBy.count
            return DoctorCheck("mdns", .ok, "\(n) other machine\(n == 1 ? "" : "s") answered an mDNS query: multicast gets through")
        }
        if let why = f.sendError {
            return DoctorCheck("mdns", .warn, "cannot send an mDNS query: \(why)", fix: byAddress)
        }
        if f.neighbours.isEmpty {
            return DoctorCheck("mdns", .ok, "no other machine answered an mDNS query, and none is known on the LAN yet (if robots never show up, the network may filter multicast: \(byAddress))")
        }
        let n = f.neighbours.count
        return DoctorCheck("mdns", .warn, "\(n) other machine\(n == 1 ? " is" : "s are") on the LAN but no mDNS responder other than this machine's answered within \(listen): the network seems to filter multicast (many school networks do)",
                           fix: byAddress)
    }

    /// The query: id 0, one question, `_services._dns-sd._udp.local.` PTR IN.
    package static var query: [UInt8] {
        var q: [UInt8] = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in ["_services", "_dns-sd", "_udp", "local"] {
            q.append(UInt8(label.utf8.count))
            q += Array(label.utf8)
        }
        return q + [0, 0, 12, 0, 1]
    }

    /// A response with at least one answer (QR set, ANCOUNT > 0).
    package static func isAnswer(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 12 && bytes[2] & 0x80 != 0 && (UInt16(bytes[6]) << 8 | UInt16(bytes[7])) > 0
    }

    /// Complete IPv4 entries of `/proc/net/arp` (flags 0x2) not on loopback.
    package static func neighbours(arpTable text: String) -> Set<String> {
        var out: Set<String> = []
        for line in text.split(separator: "\n").dropFirst() {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, let flags = Int(f[2].dropFirst(2), radix: 16), flags & 0x2 != 0, f[5] != "lo" else { continue }
            out.insert(String(f[0]))
        }
        return out
    }

    /// Sends the query on every interface with multicast and an IPv4 address; collects answers.
    static func run(interfaces: [NetworkInterface]) -> Findings {
        let own = Set(interfaces.flatMap(\.ipv4))
        let neighbours = Self.neighbours(arpTable: (try? String(contentsOfFile: "/proc/net/arp", encoding: .utf8)) ?? "").subtracting(own)
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return Findings(answeredBy: [], neighbours: neighbours, sendError: String(cString: strerror(errno))) }
        defer { close(fd) }
        var ttl: UInt8 = 255
        _ = setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, socklen_t(1))
        var group = sockaddr_in()
        group.sin_family = sa_family_t(AF_INET)
        group.sin_port = UInt16(5353).bigEndian
        group.sin_addr.s_addr = inet_addr("224.0.0.251")
        let q = query
        var sent = 0
        var lastError: String?
        for address in interfaces.filter({ $0.up && $0.multicast && !$0.loopback }).flatMap(\.ipv4) {
            var out = in_addr(s_addr: inet_addr(address))
            _ = setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &out, socklen_t(MemoryLayout<in_addr>.size))
            let n = withUnsafePointer(to: &group) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, q, q.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if n == q.count { sent += 1 } else { lastError = "\(address): \(String(cString: strerror(errno)))" }
        }
        guard sent > 0 else {
            return Findings(answeredBy: [], neighbours: neighbours, sendError: lastError ?? "no interface with multicast and an IPv4 address")
        }
        var answered: Set<String> = []
        let end = ContinuousClock.now + listen
        var buffer = [UInt8](repeating: 0, count: 9000)
        while ContinuousClock.now < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(max(1, (end - .now) / .milliseconds(1)))) > 0 else { continue }
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
            }
            guard n > 0, isAnswer(Array(buffer[..<n])) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &from.sin_addr, &text, socklen_t(text.count)) != nil else { continue }
            let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !own.contains(address) && !address.hasPrefix("127.") { answered.insert(address) }
        }
        return Findings(answeredBy: answered, neighbours: neighbours)
    }
}

extension Doctor {
    /// Whether other machines' mDNS responders answer (``MDNSProbe``).
    package func mdns() -> DoctorCheck {
        MDNSProbe.check(MDNSProbe.run(interfaces: NetworkInterfaces.list()))
    }
}
