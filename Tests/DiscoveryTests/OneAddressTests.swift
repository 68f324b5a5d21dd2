import Discovery
import SystemIO
import Testing

/// One address per receiver for the life of a connection (Protocol.md §6.4): the A and AAAA
/// answers of a receiver arrive in either order and late, and the controller sends to one
/// address throughout. The events are what ``SessionBrowser`` reports (its first address set
/// goes out 100 ms after the first answer when the other family has not answered yet), on a
/// manual clock.
@Suite struct OneAddressTests {
    let clock = Clock()
    let v4: [UInt8] = [198, 18, 0, 1]
    let v6: [UInt8] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55]

    func address(_ ip: [UInt8], port: UInt16 = 45678) -> SocketAddress {
        guard let a = SocketAddress(addressBytes: ip, port: port, scopeID: 7) else { fatalError("bad test address") }
        return a
    }

    /// Every destination the follower asked the send loop to use, in order.
    func destinations(_ actions: [FollowReceiver.Action]) -> [SocketAddress] {
        actions.compactMap { if case .sendTo(let a, _) = $0 { a } else { nil } }
    }

    /// found + resolved, then the address sets as the browser reports them, `late` ms apart.
    func run(first: [UInt8], second: [UInt8], late: Int) -> (FollowReceiver, [SocketAddress]) {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        var sent: [SocketAddress] = []
        sent += destinations(f.feed([.found(robot.key), .resolved(robot.key, host: "robot.local.", port: robot.port, txt: robot.txt)],
                                    at: clock.at(10)))
        // The first family answers; the settle wait passes without the other.
        sent += destinations(f.handle(.addresses(robot.key, [address(first)]), now: clock.at(120)))
        // Packets go out and the link works.
        for ms in stride(from: 130, through: 120 + late, by: 20) {
            _ = f.packetSent(now: clock.at(ms))
            sent += destinations(f.tick(now: clock.at(ms)))
        }
        // The other family answers late; the browser reports both, best first.
        let both = [address(first), address(second)].sorted(by: ReceiverDirectory.preferred)
        sent += destinations(f.handle(.addresses(robot.key, both), now: clock.at(120 + late)))
        for ms in stride(from: 140 + late, through: 2000 + late, by: 20) {
            _ = f.packetSent(now: clock.at(ms))
            sent += destinations(f.tick(now: clock.at(ms)))
        }
        // A refresh of the A/AAAA records reports them again, in the other order.
        sent += destinations(f.handle(.addresses(robot.key, both.reversed()), now: clock.at(2100 + late)))
        return (f, sent)
    }

    @Test(arguments: [37, 150, 900, 5000])
    func aaaaFirstThenALateKeepsTheIPv6Address(late: Int) {
        let (f, sent) = run(first: v6, second: v4, late: late)
        #expect(sent == [address(v6)])
        #expect(f.destination == address(v6))
        #expect(f.states["robot"] == .connected)
    }

    @Test(arguments: [37, 150, 900, 5000])
    func aFirstThenAAAALateKeepsTheIPv4Address(late: Int) {
        let (f, sent) = run(first: v4, second: v6, late: late)
        #expect(sent == [address(v4)])
        #expect(f.destination == address(v4))
    }

    @Test func bothAnsweringTogetherPicksIPv4() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        let actions = f.feed([.found(robot.key), .resolved(robot.key, host: "robot.local.", port: robot.port, txt: robot.txt),
                              .addresses(robot.key, [address(v4), address(v6)])], at: clock.at(10))
        #expect(destinations(actions) == [address(v4)])
    }

    @Test func theAddressMovesWhenItIsWithdrawn() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        _ = f.feed([.found(robot.key), .resolved(robot.key, host: "robot.local.", port: robot.port, txt: robot.txt),
                    .addresses(robot.key, [address(v6)])], at: clock.at(10))
        _ = f.packetSent(now: clock.at(20))
        _ = f.handle(.addresses(robot.key, [address(v4), address(v6)]), now: clock.at(300))
        #expect(f.destination == address(v6))
        let moved = f.handle(.addresses(robot.key, [address(v4)]), now: clock.at(900))
        #expect(destinations(moved) == [address(v4)])
        #expect(moved.first == .state(name: "robot", .connecting))
    }

    @Test func anUnansweredAddressMovesToTheNextAndAsksForAFreshResolve() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        _ = f.feed([.found(robot.key), .resolved(robot.key, host: "robot.local.", port: robot.port, txt: robot.txt),
                    .addresses(robot.key, [address(v4), address(v6)])], at: clock.at(10))
        _ = f.packetSent(now: clock.at(20))
        let moved = f.unresponsive(now: clock.at(3000))
        #expect(destinations(moved) == [address(v6)])
        #expect(moved.contains(.refresh(instance: "robot")))
        #expect(f.destination == address(v6))
        // Again: back to the first (wrapping round).
        #expect(destinations(f.unresponsive(now: clock.at(6000))) == [address(v4)])
    }

    @Test func anUnansweredOnlyAddressAsksForAFreshResolveAndKeepsSending() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        _ = f.feed(robot.appears, at: clock.at(10))
        #expect(f.unresponsive(now: clock.at(3000)) == [.refresh(instance: "robot")])
        #expect(f.destination == robot.address)
    }
}
