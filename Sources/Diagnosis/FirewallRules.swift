import Foundation

/// Reads a firewall ruleset as text (`nft list ruleset`, or `iptables-save` / `ip6tables-save`)
/// and says whether it may drop mDNS (5353/udp) or the receiver's port on the way in.
///
/// This is a reading of the rules, not a simulation: it reports
/// - a rule that mentions the port (alone, in a set `{ … }` or a range `a-b`) with `drop` or
///   `reject` (nft), or `--dport`/`--dports` with `-j DROP`/`-j REJECT` (iptables), in an input
///   chain or any chain;
/// - an input chain whose policy is drop with no rule accepting the port.
/// Rules it does not understand are ignored; the line says "may", and the fix names the rule.
package enum FirewallRules {
    package struct Finding: Sendable, Hashable {
        package let port: UInt16
        /// The rule or policy line that drops it.
        package let rule: String
    }

    package static func findings(nft text: String, ports: [UInt16]) -> [Finding] {
        var out: [Finding] = []
        var inInputChain = false
        var dropPolicy: String?
        var accepted: Set<UInt16> = []
        func closeChain() {
            if let policy = dropPolicy {
                for p in ports where !accepted.contains(p) { out.append(Finding(port: p, rule: policy)) }
            }
            inInputChain = false
            dropPolicy = nil
            accepted = []
        }
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters()
            if line.hasPrefix("chain ") { closeChain(); continue }
            if line.contains("hook input") {
                inInputChain = true
                if line.contains("policy drop") { dropPolicy = line }
                continue
            }
            guard line.contains("dport") else { continue }
            let verdictDrop = line.hasSuffix(" drop") || line.contains(" reject") || line.hasSuffix("drop")
            let verdictAccept = line.hasSuffix(" accept") || line.contains(" accept ")
            for p in ports where mentions(line, port: p, after: "dport") {
                if verdictDrop && (line.contains("udp") || !line.contains("tcp")) { out.append(Finding(port: p, rule: line)) }
                if verdictAccept && inInputChain { accepted.insert(p) }
            }
        }
        closeChain()
        return unique(out)
    }

    package static func findings(iptables text: String, ports: [UInt16]) -> [Finding] {
        var out: [Finding] = []
        var inputDrop: String?
        var accepted: Set<UInt16> = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters()
            if line.hasPrefix("*") {
                if let policy = inputDrop { for p in ports where !accepted.contains(p) { out.append(Finding(port: p, rule: policy)) } }
                inputDrop = nil
                accepted = []
                continue
            }
            if line.hasPrefix(":INPUT DROP") || line.hasPrefix("-P INPUT DROP") { inputDrop = line; continue }
            guard line.contains("dport") else { continue }
            let udp = line.contains("-p udp") || !line.contains("-p tcp")
            for p in ports where mentions(line, port: p, after: "dport") {
                if udp && (line.contains("-j DROP") || line.contains("-j REJECT")) { out.append(Finding(port: p, rule: line)) }
                if line.contains("-A INPUT") && line.contains("-j ACCEPT") { accepted.insert(p) }
            }
        }
        if let policy = inputDrop { for p in ports where !accepted.contains(p) { out.append(Finding(port: p, rule: policy)) } }
        return unique(out)
    }

    /// Whether the words after `keyword` (`dport 5353`, `dport { 53, 5353 }`, `--dports 5000:6000`,
    /// `dport 5000-6000`) include `port`.
    static func mentions(_ line: String, port: UInt16, after keyword: String) -> Bool {
        guard let range = line.range(of: keyword) else { return false }
        var rest = Substring(line[range.upperBound...]).drop { $0 != " " }.drop { $0 == " " }
        var tokens: [Substring] = []
        if rest.hasPrefix("{") {
            let inside = rest.dropFirst().prefix { $0 != "}" }
            tokens = inside.split(whereSeparator: { $0 == "," || $0 == " " })
        } else {
            rest = rest.prefix { $0 != " " }
            tokens = rest.split(separator: ",")
        }
        for token in tokens {
            let bounds = token.split(whereSeparator: { $0 == "-" || $0 == ":" }).compactMap { UInt16($0) }
            if bounds.count == 1, bounds[0] == port { return true }
            if bounds.count == 2, (bounds[0]...max(bounds[0], bounds[1])).contains(port) { return true }
        }
        return false
    }

    private static func unique(_ findings: [Finding]) -> [Finding] {
        var seen: Set<Finding> = []
        return findings.filter { seen.insert($0).inserted }
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
