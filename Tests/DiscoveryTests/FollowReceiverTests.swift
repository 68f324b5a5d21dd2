import Discovery
import SystemIO
import Testing

/// A receiver as a test scripts it: its events and the address it would be reached at.
struct FakeReceiver {
    var name: String
    var session = "KLabRemoteSample"
    var peer = "00000000000000aa"
    var interface: UInt32 = 7
    var ip: [UInt8] = [198, 18, 0, 1]
    var port: UInt16 = 45678
    var version = 1
    var timing = TimingContract.standard

    var key: ServiceKey { ServiceKey(name: name, interface: interface) }
    var txt: [UInt8] {
        var t = TXTRecord()
        try? t.set("v", String(version))
        try? t.set("session", session)
        try? t.set("peer", peer)
        try? t.set("name", name)
        try? t.set("failsafe", String(timing.failsafeMilliseconds))
        try? t.set("rate", String(timing.rateHz))
        return t.encoded
    }
    var address: SocketAddress {
        guard let a = SocketAddress(addressBytes: ip, port: port, scopeID: interface) else { fatalError("test IP must be 4 or 16 bytes") }
        return a
    }
    /// found, resolved, addresses: what SessionBrowser reports for a receiver that is there.
    var appears: [BrowserEvent] {
        [.found(key), .resolved(key, host: "\(name).local.", port: port, txt: txt), .addresses(key, [address])]
    }
    var leaves: BrowserEvent { .lost(key) }
}

/// The manual clock: an origin and offsets from it.
struct Clock {
    let origin = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { origin + .milliseconds(ms) }
}

extension FollowReceiver {
    mutating func feed(_ events: [BrowserEvent], at now: ContinuousClock.Instant) -> [Action] {
        events.flatMap { handle($0, now: now) }
    }
}

func session(_ s: String = "KLabRemoteSample") -> SessionID {
    // Test sessions are literals known to be valid.
    (try? SessionID(s)) ?? { fatalError("bad test session") }()
}

@Suite struct FollowReceiverTests {
    let clock = Clock()

    @Test func theOnlyReceiverIsFollowedOnceTheSettleWindowHasPassed() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let robot = FakeReceiver(name: "robot")
        let early = f.feed(robot.appears, at: clock.at(30))
        #expect(early == [.state(name: "robot", .available)])
        #expect(f.followed == nil)
        #expect(f.nextDeadline == clock.at(500))
        let actions = f.tick(now: clock.at(500))
        guard case .sendTo(let to, let receiver)? = actions.last else { Issue.record("no destination: \(actions)"); return }
        #expect(actions.first == .state(name: "robot", .connecting))
        #expect(to == robot.address && receiver.announcement.timing == .standard)
        #expect(f.destination == robot.address)
        #expect(f.packetSent(now: clock.at(520)) == [.state(name: "robot", .connected)])
        #expect(f.packetSent(now: clock.at(540)) == [])
        #expect(f.summary == "following \"robot\" at 198.18.0.1:45678 (connected)")
        #expect(f.nextDeadline == nil)
    }

    @Test func aNamedReceiverIsFollowedAtOnceAndOthersStayAvailable() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot-b"), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a", ip: [198, 18, 0, 1])
        let b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        var actions = f.feed(a.appears, at: clock.at(10))
        #expect(actions == [.state(name: "robot-a", .available)])
        #expect(f.summary == "looking for \"robot-b\" in session \"KLabRemoteSample\"")
        actions = f.feed(b.appears, at: clock.at(20))
        #expect(actions.contains(.state(name: "robot-b", .connecting)))
        #expect(f.followed == "robot-b" && f.destination == b.address)
        #expect(f.states["robot-a"] == .available)
    }

    @Test func aPeerIDNamesAReceiverToo() {
        var f = FollowReceiver(.init(session: session(), receiverName: "00000000000000bb"), now: clock.at(0))
        _ = f.feed(FakeReceiver(name: "robot-a").appears, at: clock.at(10))
        _ = f.feed(FakeReceiver(name: "robot-b", peer: "00000000000000bb", ip: [198, 18, 0, 3]).appears, at: clock.at(10))
        #expect(f.followed == "robot-b")
    }

    @Test func severalReceiversAndNoNameIsAmbiguousOnceUntilSomeoneChooses() throws {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a"), b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        _ = f.feed(a.appears + b.appears, at: clock.at(40))
        let actions = f.tick(now: clock.at(500))
        guard case .ambiguous(let list)? = actions.first else { Issue.record("not ambiguous: \(actions)"); return }
        #expect(list.map(\.name) == ["robot-a", "robot-b"])
        #expect(f.tick(now: clock.at(900)).isEmpty)
        #expect(f.followed == nil)
        let chosen = f.choose("robot-b", now: clock.at(1000))
        #expect(chosen.last == .sendTo(b.address, receiver: try #require(f.directory.receiver(named: "robot-b"))))
    }

    @Test func whenTheReceiverLeavesTheControllerStopsAndFollowsItToItsNewPort() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        var robot = FakeReceiver(name: "robot")
        _ = f.feed(robot.appears, at: clock.at(10))
        _ = f.tick(now: clock.at(500))
        _ = f.packetSent(now: clock.at(510))
        let gone = f.handle(robot.leaves, now: clock.at(3000))
        #expect(gone == [.state(name: "robot", .disconnected), .stopSending(name: "robot")])
        #expect(f.destination == nil)
        #expect(f.summary == "receiver \"robot\" gone — looking in session \"KLabRemoteSample\"")
        robot.port = 45999
        robot.peer = "00000000000000cc"      // a restarted receiver is a new peer
        let back = f.feed(robot.appears, at: clock.at(4200))
        #expect(back.first == .state(name: "robot", .connecting))      // straight back, no "available" flash
        #expect(f.destination == robot.address && f.destination?.port == 45999)
        #expect(f.packetSent(now: clock.at(4210)) == [.state(name: "robot", .connected)])
    }

    @Test func aNewPortWithoutGoodbyeIsFollowedToo() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        var robot = FakeReceiver(name: "robot")
        _ = f.feed(robot.appears, at: clock.at(10))
        _ = f.packetSent(now: clock.at(20))
        robot.port = 47000
        let moved = f.feed([.resolved(robot.key, host: "robot.local.", port: 47000, txt: robot.txt),
                            .addresses(robot.key, [robot.address])], at: clock.at(5000))
        #expect(moved.contains(.state(name: "robot", .connecting)))
        #expect(moved.contains { if case .sendTo(let a, _) = $0 { a.port == 47000 } else { false } })
    }

    @Test func aHashCollisionIsCaughtByTheFullSessionID() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let stranger = FakeReceiver(name: "stranger", session: "SomeOtherSession")
        let actions = f.feed(stranger.appears, at: clock.at(10)) + f.tick(now: clock.at(600))
        #expect(actions.count == 1)
        guard case .ignored(let name, let reason)? = actions.first else { Issue.record("\(actions)"); return }
        #expect(name == "stranger" && reason.contains("SomeOtherSession") && reason.contains("hash collision"))
        #expect(f.followed == nil && f.directory.receivers.isEmpty)
    }

    @Test func aReceiverOfAnotherProtocolVersionIsIgnored() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let actions = f.feed(FakeReceiver(name: "future", version: 2).appears, at: clock.at(10))
        #expect(actions == [.ignored(name: "future", reason: "speaks protocol version 2; this build speaks 1")])
    }

    @Test func withoutANameAnotherSingleReceiverIsFollowedAfterTheSwitchGrace() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a"), b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        _ = f.feed(a.appears, at: clock.at(10))
        _ = f.tick(now: clock.at(500))
        _ = f.handle(a.leaves, now: clock.at(1000))
        _ = f.feed(b.appears, at: clock.at(1500))
        #expect(f.followed == nil)
        #expect(f.nextDeadline == clock.at(3000))
        let actions = f.tick(now: clock.at(3000))
        #expect(actions.contains(.state(name: "robot-b", .connecting)))
        #expect(f.followed == "robot-b")
    }

    @Test func withANameAnotherReceiverIsNeverFollowed() {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot-a"), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a"), b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        _ = f.feed(a.appears, at: clock.at(10))
        _ = f.handle(a.leaves, now: clock.at(1000))
        _ = f.feed(b.appears, at: clock.at(1500))
        _ = f.tick(now: clock.at(60_000))
        #expect(f.followed == nil && f.states["robot-a"] == .disconnected && f.states["robot-b"] == .available)
    }

    @Test func theOldReceiverComingBackWinsOverANewcomer() {
        var f = FollowReceiver(.init(session: session()), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a"), b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        _ = f.feed(a.appears, at: clock.at(10))
        _ = f.tick(now: clock.at(500))
        _ = f.handle(a.leaves, now: clock.at(1000))
        _ = f.feed(b.appears, at: clock.at(1100))
        _ = f.feed(a.appears, at: clock.at(1200))
        #expect(f.followed == "robot-a")
    }

    @Test func aResponderRestartKeepsTheDestinationAndDropsWhatDidNotComeBack() {
        var f = FollowReceiver(.init(session: session(), refreshGrace: .seconds(3)), now: clock.at(0))
        let a = FakeReceiver(name: "robot-a"), b = FakeReceiver(name: "robot-b", ip: [198, 18, 0, 3])
        _ = f.feed(a.appears + b.appears, at: clock.at(10))
        _ = f.choose("robot-a", now: clock.at(600))
        #expect(f.handle(.responderLost(retryIn: .seconds(1)), now: clock.at(1000)) == [.discoveryPaused(retryIn: .seconds(1))])
        #expect(f.destination == a.address)
        #expect(f.summary.hasSuffix("mDNS responder gone, retrying"))
        #expect(f.tick(now: clock.at(20_000)).isEmpty)      // no expiry while the responder is down
        #expect(f.handle(.responderBack, now: clock.at(21_000)) == [.discoveryResumed])
        #expect(f.nextDeadline == clock.at(24_000))
        _ = f.feed(a.appears, at: clock.at(21_050))           // robot-a answers again, robot-b does not
        let expired = f.tick(now: clock.at(24_000))
        #expect(expired == [.state(name: "robot-b", .unavailable)])
        #expect(f.followed == "robot-a" && f.destination == a.address)
    }

    @Test func aReceiverOnTwoInterfacesStaysUntilItLeavesBoth() throws {
        var f = FollowReceiver(.init(session: session(), receiverName: "robot"), now: clock.at(0))
        let wired = FakeReceiver(name: "robot", interface: 2, ip: [10, 0, 0, 5])
        let wifi = FakeReceiver(name: "robot", interface: 3, ip: [198, 18, 0, 1])
        _ = f.feed(wired.appears + wifi.appears, at: clock.at(10))
        #expect(f.destination == wired.address)                 // 10.0.0.5 sorts first
        let oneLeft = f.handle(wired.leaves, now: clock.at(100))
        #expect(f.destination == wifi.address)
        #expect(oneLeft.contains(.sendTo(wifi.address, receiver: try #require(f.directory.receiver(named: "robot")))))
        #expect(f.handle(wifi.leaves, now: clock.at(200)) == [.state(name: "robot", .disconnected), .stopSending(name: "robot")])
    }
}

@Suite struct ReceiverDirectoryTests {
    let clock = Clock()

    @Test func nothingIsAvailableUntilResolvedAndAddressed() {
        var d = ReceiverDirectory(session: session())
        let r = FakeReceiver(name: "robot")
        #expect(d.apply(r.appears[0], now: clock.at(0)).isEmpty)
        #expect(d.apply(r.appears[1], now: clock.at(0)).isEmpty)
        guard case .available(let got)? = d.apply(r.appears[2], now: clock.at(0)).first else { Issue.record("not available"); return }
        #expect(got.name == "robot" && got.port == 45678 && got.host == "robot.local." && got.interfaces == [7])
        #expect(got.announcement.peer == "00000000000000aa")
    }

    @Test func addressesArePreferredIPv4ThenRoutableThenLinkLocalWithTheScopeKept() throws {
        var d = ReceiverDirectory(session: session())
        let r = FakeReceiver(name: "robot", interface: 5)
        let v4 = try #require(SocketAddress(addressBytes: [198, 18, 0, 1], port: 45678))
        let ll = try #require(SocketAddress(addressBytes: [0xFE, 0x80] + Array(repeating: 0, count: 13) + [1], port: 45678, scopeID: 5))
        let global = try #require(SocketAddress(addressBytes: [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [1], port: 45678, scopeID: 5))
        _ = d.apply(r.appears[0], now: clock.at(0))
        _ = d.apply(r.appears[1], now: clock.at(0))
        _ = d.apply(.addresses(r.key, [ll, global, v4]), now: clock.at(0))
        let got = try #require(d.receiver(named: "robot"))
        #expect(got.addresses == [v4, global, ll])
        #expect(ll.scopeID == 5 && global.scopeID == 0 && ll.isLinkLocal && !global.isLinkLocal)
    }

    @Test func malformedTXTIsIgnoredWithAReason() {
        var d = ReceiverDirectory(session: session())
        let key = ServiceKey(name: "junk", interface: 1)
        _ = d.apply(.found(key), now: clock.at(0))
        let changes = d.apply(.resolved(key, host: "h.local.", port: 1, txt: [9, 1, 2]), now: clock.at(0))
        #expect(changes == [.ignored(name: "junk", reason: "its TXT record is malformed")])
        #expect(d.apply(.lost(key), now: clock.at(0)).isEmpty)
        #expect(d.receivers.isEmpty)
    }

    @Test func aReceiverWhoseTXTTurnsForeignBecomesUnavailable() {
        var d = ReceiverDirectory(session: session())
        var r = FakeReceiver(name: "robot")
        for e in r.appears { _ = d.apply(e, now: clock.at(0)) }
        r.session = "elsewhere"
        let changes = d.apply(.resolved(r.key, host: "robot.local.", port: r.port, txt: r.txt), now: clock.at(0))
        #expect(changes.first == .unavailable(name: "robot"))
        #expect(changes.count == 2)
    }
}

import PropertyBased

@Suite struct FollowReceiverProperties {
    /// Random sequences of discovery events (receivers appearing on random ports and interfaces,
    /// leaving, a responder restart, time passing, packets sent): the machine never traps, and
    /// what it follows is always consistent with what it knows.
    @Test(arguments: [nil, "r1"] as [String?])
    func followingStaysConsistent(receiverName: String?) async {
        await propertyCheck(count: 400, input: Gen<UInt8>.value().array(of: 0...90)) { script in
            let clock = Clock()
            var f = FollowReceiver(.init(session: session(), receiverName: receiverName), now: clock.at(0))
            var ms = 0
            var i = 0
            while i + 2 < script.count {
                let (op, who, arg) = (script[i] % 8, Int(script[i + 1] % 3), script[i + 2])
                i += 3
                ms += Int(arg) * 10
                let r = FakeReceiver(name: "r\(who)", peer: "p\(who)", interface: UInt32(1 + arg % 2),
                                     ip: [198, 18, 0, 1 + UInt8(who)], port: 45000 + UInt16(arg % 4))
                let now = clock.at(ms)
                switch op {
                case 0, 1: _ = f.feed(r.appears, at: now)
                case 2: _ = f.handle(r.leaves, now: now)
                case 3: _ = f.handle(.resolved(r.key, host: "h.local.", port: r.port, txt: r.txt), now: now)
                case 4: _ = f.packetSent(now: now)
                case 5: _ = f.handle(arg % 2 == 0 ? .responderLost(retryIn: .seconds(1)) : .responderBack, now: now)
                case 6: _ = f.handle(.addresses(r.key, []), now: now)
                default: _ = f.tick(now: now)
                }
                #expect((f.followed == nil) == (f.destination == nil))
                if let followed = f.followed {
                    let known = f.directory.receiver(named: followed)
                    #expect(known != nil)
                    // One address per receiver: the destination is one of its addresses (not
                    // necessarily the best: it stays while announced).
                    #expect(f.destination.map { known?.addresses.contains($0) ?? false } ?? false)
                    #expect(f.states[followed] == .connecting || f.states[followed] == .connected)
                    if let receiverName { #expect(followed == receiverName) }
                }
                if let deadline = f.nextDeadline, deadline <= now {
                    // A deadline in the past means tick() has work: after it, it must be gone
                    // (a caller polling until nextDeadline would otherwise spin).
                    _ = f.tick(now: now)
                    #expect(f.nextDeadline.map { $0 > now } ?? true)
                }
            }
        }
    }
}
