@testable import Discovery
import Testing

/// The daemon's one-line answers (avahi-daemon's simple protocol) and the requests we send it.
@Suite struct AvahiHostLookupTests {
    @Test func anIPv4AnswerIsTheAddressAndItsInterface() {
        let answer = AvahiHostLookup.parse("+ 3 0 robot-1.local 198.18.0.7", ipv6: false)
        #expect(answer == .init(interface: 3, type: 1, address: [198, 18, 0, 7]))
    }

    @Test func anIPv6AnswerKeepsAllSixteenBytes() {
        let answer = AvahiHostLookup.parse("+ 2 1 robot-1.local fe80::1:2", ipv6: true)
        #expect(answer?.type == 28)
        #expect(answer?.interface == 2)
        #expect(answer?.address == [0xfe, 0x80] + [UInt8](repeating: 0, count: 10) + [0, 1, 0, 2])
    }

    @Test(arguments: [
        "-15 Timeout reached",                           // no such host within the daemon's time
        "+ 3 1 robot-1.local fe80::1",                   // the other family than asked
        "+ 0 0 robot-1.local 198.18.0.7",                // no interface
        "+ 3 0 robot-1.local 198.18.0",                  // not an address
        "+ 3 0 robot-1.local",                           // a field short
        "+ 3 0 robot-1.local 198.18.0.7 extra",          // a field over
        "",
    ])
    func anythingElseIsNoAnswer(_ line: String) {
        #expect(AvahiHostLookup.parse(line, ipv6: false) == nil)
    }

    @Test func theRequestNamesTheFamilyAndTheHost() {
        #expect(AvahiHostLookup.request(host: "robot-1.local.", ipv6: false) == "RESOLVE-HOSTNAME-IPV4 robot-1.local.\n")
        #expect(AvahiHostLookup.request(host: "robot-1.local.", ipv6: true) == "RESOLVE-HOSTNAME-IPV6 robot-1.local.\n")
    }

    /// The daemon reads one word: a name it would cut (or a second command smuggled after a
    /// newline) is not sent at all; the record query answers for it instead.
    @Test(arguments: ["robot 1.local.", "robot-1.local.\nRESOLVE-ADDRESS 10.0.0.1", "", String(repeating: "a", count: 1014)])
    func aNameTheDaemonWouldNotTakeWholeIsNotAsked(_ host: String) {
        #expect(AvahiHostLookup.request(host: host, ipv6: false) == nil)
    }
}
