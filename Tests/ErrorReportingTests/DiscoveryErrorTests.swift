import Discovery
import ErrorReporting
import Testing

@Suite struct DiscoveryErrorTests {
    @Test func noResponderMapsToExitFiveWithTheFallbackNamed() {
        let e = DiscoveryError.noResponder(call: "DNSServiceBrowse")
        #expect(e.userFacing().status == .noMDNSDaemon)
        #expect(e.userFacing().message == "no mDNS responder is running — start avahi-daemon, or use --peer HOST:PORT")
        #expect(e.userFacing(fallback: "--no-advertise").message.hasSuffix("or use --no-advertise"))
        let other = DiscoveryError.failed(call: "DNSServiceRegister", code: -65549)
        #expect(other.userFacing().status == .failure)
        #expect(other.userFacing().message == "discovery: DNSServiceRegister failed: invalid (-65549)")
    }
}
