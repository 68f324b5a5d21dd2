import Receiver
import RemoteWire
import Testing

/// Who a kick holds, and for how long (Receiver/KickHold.swift), on a manual clock. Sources are
/// numbers: host × 100 + port, the host alone being its "any port" key.
@Suite struct KickHoldTests {
    let t0 = ContinuousClock.now
    typealias Hold = KickHold<Int>

    func source(host: Int, port: Int) -> (source: Int, host: Int) { (host * 100 + port, host * 100) }

    func held(_ hold: Hold, _ s: (source: Int, host: Int), _ name: WireText?, at seconds: Double) -> Bool {
        hold.verdict(s.source, host: s.host, name: name, now: t0 + .milliseconds(Int(seconds * 1000))) != .free
    }

    /// A kicked `control --name Ann` restarted — a new port, or another machine — stays held for
    /// the whole hold, and no longer.
    @Test func aKickedNameIsHeldFromAnyAddressAndPortForTheHold() {
        var hold = Hold()
        let ann = source(host: 7, port: 1)
        hold.kick(ann.source, host: ann.host, name: "Ann", now: t0)
        #expect(held(hold, ann, "Ann", at: 0.1))
        #expect(held(hold, source(host: 7, port: 2), "Ann", at: 0.74), "restarted on a new port")
        #expect(held(hold, source(host: 9, port: 5), "Ann", at: 9.9), "restarted on another machine")
        #expect(!held(hold, source(host: 9, port: 5), "Ann", at: 10), "the hold is 10 s")
        #expect(Hold.duration == .seconds(10))
    }

    /// Many students share one address behind the phone server: the kicked one's name is held,
    /// the others drive; a plain sender from that address is held (no name tells it apart).
    @Test func othersNamedOnTheKickedAddressAreNotHeldButPlainSendersThereAre() {
        var hold = Hold()
        hold.kick(source(host: 7, port: 1).source, host: 700, name: "Ann", now: t0)
        #expect(!held(hold, source(host: 7, port: 2), "Ben", at: 1))
        #expect(held(hold, source(host: 7, port: 3), nil, at: 1))
        #expect(!held(hold, source(host: 8, port: 3), nil, at: 1), "a plain sender elsewhere")
    }

    /// A kicked plain sender (no name) is known by its address only: every port of that host is
    /// held, whatever name it gives next; other hosts are not.
    @Test func aKickedPlainSenderIsHeldByItsAddressOnAnyPort() {
        var hold = Hold()
        hold.kick(source(host: 7, port: 1).source, host: 700, name: nil, now: t0)
        #expect(held(hold, source(host: 7, port: 4), nil, at: 5))
        #expect(held(hold, source(host: 7, port: 4), "Zoe", at: 5), "the same address, now with a name")
        #expect(!held(hold, source(host: 6, port: 4), nil, at: 5))
        #expect(!held(hold, source(host: 7, port: 4), nil, at: 10))
    }

    /// A newcomer turned away is told once (its later datagrams find it `told`), and neither that
    /// nor any number of attempts moves the hold's end.
    @Test func attemptsNeverExtendTheHoldAndAreToldOnce() {
        var hold = Hold()
        hold.kick(101, host: 100, name: "Ann", now: t0)
        let end = t0 + .seconds(10)
        #expect(hold.verdict(102, host: 100, name: "Ann", now: t0 + .seconds(3)) == .held(until: end, told: false))
        hold.turnedAway(102, host: 100, until: end, now: t0 + .seconds(3))
        #expect(hold.verdict(102, host: 100, name: "Ann", now: t0 + .seconds(4)) == .held(until: end, told: true))
        #expect(hold.verdict(101, host: 100, name: "Ann", now: t0 + .seconds(4)) == .held(until: end, told: true), "the kicked one was told by its kick")
        for port in 3..<200 { hold.turnedAway(100 + port, host: 100, until: end, now: t0 + .seconds(5)) }
        #expect(hold.verdict(999, host: 900, name: "Ann", now: t0 + .seconds(9)) == .held(until: end, told: false),
                "a flood of turned-away newcomers does not push the kick out")
        #expect(hold.until == end)
        #expect(hold.isIdle(now: end) && hold.verdict(999, host: 900, name: "Ann", now: end) == .free)
    }

    /// Bounded: at most `capacity` entries; the oldest kick goes first.
    @Test func boundedWithTheOldestKickGoingFirst() {
        var hold = Hold()
        for i in 0..<(Hold.capacity + 1) { hold.kick(1000 + i, host: 1000 + i, name: "s\(i)", now: t0 + .milliseconds(i)) }
        #expect(hold.verdict(5, host: 5, name: "s0", now: t0 + .seconds(1)) == .free)
        #expect(hold.verdict(5, host: 5, name: "s1", now: t0 + .seconds(1)) != .free)
    }
}
