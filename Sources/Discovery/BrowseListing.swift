#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RemoteWire
import SystemIO

/// The lines `analog-remote browse` prints (stdout; the caller writes them), one per receiver or change. Stable, so
/// scripts can read them: `available "NAME" ADDRESS:PORT v=1 peer=… failsafe=MS rate=HZ robot=ID if=IFACE`.
package enum BrowseListing {
    /// `"robot" 198.18.0.1:45678 v=1 peer=… name="robot" failsafe=250 rate=50 if=eth0 also=[fe80::1%eth0]:45678`
    package static func describe(_ r: DiscoveredReceiver, interfaceName: (UInt32) -> String = InterfaceNames.name(of:)) -> String {
        var parts = [quote(r.name), r.destination.map(String.init(describing:)) ?? "?"]
        let a = r.announcement
        parts.append("v=\(a.version)")
        if !a.peer.isEmpty { parts.append("peer=\(a.peer)") }
        if !a.displayName.isEmpty && a.displayName != r.name { parts.append("name=\(quote(a.displayName))") }
        parts.append("failsafe=\(a.timing.failsafeMilliseconds)")
        parts.append("rate=\(a.timing.rateHz)")
        if let robot = a.robot { parts.append("robot=\(robot)") }
        parts.append("if=" + r.interfaces.map(interfaceName).joined(separator: ","))
        let others = r.addresses.dropFirst()
        if !others.isEmpty { parts.append("also=" + others.map(String.init(describing:)).joined(separator: ",")) }
        if r.instance != r.name { parts.append("instance=\(quote(DisplayText.sanitised(r.instance)))") }
        return parts.joined(separator: " ")
    }

    /// One line for a change: `available …`, `updated …`, `unavailable "robot"`, `ignored "x": why`.
    package static func line(for change: DirectoryChange, interfaceName: (UInt32) -> String = InterfaceNames.name(of:)) -> String {
        switch change {
        case .available(let r): "available " + describe(r, interfaceName: interfaceName)
        case .updated(let r): "updated " + describe(r, interfaceName: interfaceName)
        case .unavailable(let name): "unavailable " + quote(name)
        case .ignored(let name, let reason): "ignored \(quote(name)): \(reason)"
        }
    }

    /// The line for "the mDNS responder went away" (`browse`, `advertise`).
    package static func responderLost(retryIn retry: Duration) -> String {
        "responder-lost: the mDNS responder went away; retrying in \(retry)"
    }

    /// Why a receiver shows under another name than it asked for, and what to do about it.
    package static func renameReason(asked: String) -> String {
        "it asked for \(quote(asked)), which another receiver of this session already uses (drive it with --receiver NAME using the new name; rename one of them to end the clash)"
    }

    /// `20`, `33.3`: a period in milliseconds, at most one decimal.
    package static func milliseconds(_ d: Duration) -> String {
        let tenths = (d.components.seconds * 10_000 + d.components.attoseconds / 100_000_000_000_000)
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }

    /// `12.345` — seconds since the start, for the live listing.
    package static func elapsed(_ d: Duration) -> String {
        let ms = Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
        let frac = ms % 1000
        return "\(ms / 1000)." + (frac < 10 ? "00" : frac < 100 ? "0" : "") + "\(frac)"
    }

    /// JSON-style quoting, so names with spaces or quotes stay one field.
    package static func quote(_ s: String) -> String { JSONText.quote(s) }
}

package enum InterfaceNames {
    /// `eth0` for an interface index, or the number when it has no name (any more).
    package static func name(of index: UInt32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index != 0, if_indextoname(index, &buffer) != nil else { return String(index) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

package enum HostName {
    /// This machine's host name without domain (gethostname), or nil.
    package static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = name.split(separator: ".").first.map(String.init) ?? name
        return short.isEmpty ? nil : short
    }
}
