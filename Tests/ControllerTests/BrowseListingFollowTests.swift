import Controller
@testable import Discovery
import SystemIO
import Testing

@Suite struct BrowseListingFollowTests {
    @Test func followLinesNameTheReceiverThePeriodAndWhatBoundIt() throws {
        let to = try #require(SocketAddress(addressBytes: [198, 18, 0, 1], port: 45678))
        var a = ReceiverAnnouncement(session: try SessionID("s"), peer: "p", displayName: "robot",
                                     timing: TimingContract(failsafeMilliseconds: 1000, rateHz: 30))
        var r = DiscoveredReceiver(name: "robot", announcement: a, host: "h.local.", port: 45678, addresses: [to], interfaces: [1], notes: [])
        #expect(BrowseListing.line(for: .sendTo(to, receiver: r), requestedRateHz: 10)
                == "follow \"robot\" 198.18.0.1:45678 every 33.3 ms (the receiver's rate)")
        a.timing = TimingContract(failsafeMilliseconds: 4, rateHz: 50)
        r.announcement = a
        #expect(BrowseListing.line(for: .sendTo(to, receiver: r))
                == "follow \"robot\" 198.18.0.1:45678 every 2 ms (the fastest rate this controller sends) — cannot honour its failsafe of 4 ms")
        #expect(BrowseListing.line(for: .state(name: "robot", .disconnected)) == "state \"robot\" disconnected")
        #expect(BrowseListing.line(for: .stopSending(name: "robot")) == "stop \"robot\": gone, still looking")
    }
}
