import BoardLink
import Diagnosis
import Foundation
import SerialTTY
import TestSupport
import Testing

@Suite struct FirewallRulesTests {
    @Test func anNftRuleDroppingMDNSIsFound() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\tudp dport 5353 drop
            \t}
            }
            """
        let found = FirewallRules.findings(nft: ruleset, ports: [5353, 27183])
        #expect(found.map(\.port) == [5353])
        #expect(found.first?.rule == "udp dport 5353 drop")
    }

    @Test func setsAndRangesCount() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\tudp dport { 53, 27000-28000 } reject
            \t}
            }
            """
        #expect(FirewallRules.findings(nft: ruleset, ports: [5353, 27183]).map(\.port) == [27183])
    }

    @Test func aDropPolicyWithoutAnAcceptIsFound() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t\tudp dport 5353 accept
            \t}
            }
            """
        #expect(FirewallRules.findings(nft: ruleset, ports: [5353, 27183]).map(\.port) == [27183])
    }

    @Test func anOpenRulesetIsClean() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\ttcp dport 22 accept
            \t}
            }
            """
        #expect(FirewallRules.findings(nft: ruleset, ports: [5353, 27183]).isEmpty)
    }

    @Test func iptablesRulesAndPolicies() {
        let dropping = """
            *filter
            :INPUT ACCEPT [0:0]
            -A INPUT -p udp -m udp --dport 5353 -j DROP
            COMMIT
            """
        #expect(FirewallRules.findings(iptables: dropping, ports: [5353, 27183]).map(\.port) == [5353])
        let policy = """
            *filter
            :INPUT DROP [0:0]
            -A INPUT -p udp -m multiport --dports 5353,27183 -j ACCEPT
            COMMIT
            """
        #expect(FirewallRules.findings(iptables: policy, ports: [5353, 27183]).isEmpty)
        let closed = "*filter\n:INPUT DROP [0:0]\nCOMMIT\n"
        #expect(FirewallRules.findings(iptables: closed, ports: [5353, 27183]).map(\.port) == [5353, 27183])
    }
}

@Suite struct DoctorReportTests {
    @Test func oneLinePerCheckWithItsFix() {
        let check = DoctorCheck("avahi", .fail, "no mDNS responder is running", fix: "sudo systemctl enable --now avahi-daemon")
        #expect(check.line == "fail  avahi: no mDNS responder is running — fix: sudo systemctl enable --now avahi-daemon")
        #expect(DoctorCheck("port", .ok, "udp port 27183 is free").line == "ok    port: udp port 27183 is free")
    }

    @Test func exitStatusIsZeroOnlyWhenAllIsWell() {
        let ok = DoctorCheck("a", .ok, ""), skip = DoctorCheck("b", .skip, ""), warn = DoctorCheck("c", .warn, ""), fail = DoctorCheck("d", .fail, "")
        #expect(DoctorVerdict.exitStatus([ok, skip]) == 0)
        #expect(DoctorVerdict.exitStatus([ok, warn]) == 1)
        #expect(DoctorVerdict.exitStatus([ok, fail]) == 1)
    }
}

@Suite struct StableNameTests {
    @Test func linksToADeviceAreFound() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dev-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: "\(dir)/ttyACM0", contents: nil))
        #expect(FileManager.default.createFile(atPath: "\(dir)/ttyACM1", contents: nil))
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/programland", withDestinationPath: "ttyACM0")
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/programland-HIDPC", withDestinationPath: "ttyACM0")
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/programland-OTHER", withDestinationPath: "ttyACM1")
        #expect(StableNames.links(to: "\(dir)/ttyACM0", in: dir) == ["\(dir)/programland", "\(dir)/programland-HIDPC"])
        #expect(StableNames.links(to: "\(dir)/ttyACM1", in: dir) == ["\(dir)/programland-OTHER"])
    }
}

@Suite struct UdevRuleTests {
    /// The rule names exactly the USB ids `boards` and `doctor` treat as the kit.
    @Test func theRuleMatchesKitUSB() throws {
        let text = try String(contentsOf: Paths.repositoryFile("packaging/70-analog-remote.rules"), encoding: .utf8)
        var ids: Set<String> = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains("ATTRS{idVendor}") {
            let values = line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            guard values.count >= 2 else { continue }
            ids.insert("\(values[0]):\(values[1])")
        }
        #expect(ids == KitUSB.ids)
        #expect(text.contains("SYMLINK+=\"\(KitUSB.stableName)\""))
        #expect(text.contains("GROUP=\"dialout\""))
    }
}
