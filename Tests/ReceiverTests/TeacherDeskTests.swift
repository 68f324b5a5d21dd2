import ControlPlane
import ControlWire
import Receiver
import RemoteWire
import Testing

/// The receiver's dashboard state (Receiver/TeacherDesk.swift) on an injected clock.
@Suite struct TeacherDeskTests {
    let t0 = ContinuousClock.now

    /// A watcher gets a report at once, then at most two a second, and none once its watch has
    /// lapsed (3 s without renewal).
    @Test func reportsAreBoundedAndLapse() {
        var desk = TeacherDesk<Int>(now: t0)
        desk.watch(from: 1, nonce: 11, now: t0)
        var sent: [Duration] = []
        var t = t0
        while t < t0 + .seconds(5) {
            for due in desk.reportsDue(now: t) where due.source == 1 { sent.append(t - t0) }
            t += .milliseconds(10)
        }
        #expect(sent.first == .zero)
        let inFirstSecond = sent.filter { $0 < .seconds(1) }.count
        #expect(inFirstSecond == 2, "\(sent)")
        #expect(sent.allSatisfy { $0 < TeacherCommand.watchLifetime }, "no report after the watch lapsed: \(sent)")
        #expect(!desk.isWatched)
    }

    /// Each report is signed for the nonce of the watch its watcher last renewed with; a renewal
    /// keeps the serial counting (the dashboard orders by it across nonces); a watcher whose watch
    /// lapsed and comes back starts again from 1, under its new nonce.
    @Test func reportsCarryTheLatestWatchNonceAndSerialsCountAcrossRenewals() {
        var desk = TeacherDesk<Int>(now: t0)
        var got: [(serial: UInt32, nonce: UInt64)] = []
        func run(from: Duration, to: Duration) {
            var t = t0 + from
            while t < t0 + to {
                for due in desk.reportsDue(now: t) where due.source == 1 { got.append((due.serial, due.nonce)) }
                t += .milliseconds(10)
            }
        }
        desk.watch(from: 1, nonce: 11, now: t0)
        run(from: .zero, to: .seconds(1))
        desk.watch(from: 1, nonce: 12, now: t0 + .seconds(1))
        run(from: .seconds(1), to: .seconds(2))
        #expect(got.map(\.serial) == [1, 2, 3, 4], "\(got)")
        #expect(got.map(\.nonce) == [11, 11, 12, 12], "\(got)")
        run(from: .seconds(2), to: .seconds(5))   // lapses 3 s after the renewal
        #expect(!desk.isWatched)
        got.removeAll()
        desk.watch(from: 1, nonce: 13, now: t0 + .seconds(5))
        run(from: .seconds(5), to: .milliseconds(5100))
        #expect(got.map(\.serial) == [1] && got.map(\.nonce) == [13], "\(got)")
    }

    /// Round trip and loss over the window; a new driver starts afresh; no pings unwatched.
    @Test func linkFigures() {
        var desk = TeacherDesk<Int>(now: t0)
        #expect(desk.pingDue(driver: 5, now: t0) == nil, "unwatched: no ping")
        desk.watch(from: 1, nonce: 11, now: t0)
        let a = desk.pingDue(driver: 5, now: t0)!
        desk.pong(id: a, from: 5, now: t0 + .milliseconds(4))
        #expect(desk.pingDue(driver: 5, now: t0 + .milliseconds(100)) == nil, "one ping per period")
        let b = desk.pingDue(driver: 5, now: t0 + .milliseconds(500))!
        desk.pong(id: b, from: 5, now: t0 + .milliseconds(510))
        _ = desk.pingDue(driver: 5, now: t0 + .milliseconds(1000))   // never answered
        desk.pong(id: b, from: 6, now: t0 + .milliseconds(1100))     // another source: ignored
        let link = desk.link(now: t0 + .milliseconds(2100))
        #expect(link.mean == 7 && link.max == 10 && link.loss == 333, "\(link)")
        _ = desk.pingDue(driver: 6, now: t0 + .milliseconds(2200))
        #expect(desk.link(now: t0 + .milliseconds(2200)).mean == WatchReport.unknown)
    }

    /// Identify touches only the LEDs and the buzzer, changes them every step, and ends after 3 s.
    @Test func identifyBlinksOnlyLightsAndBuzzer() {
        var desk = TeacherDesk<Int>(now: t0)
        desk.identify(now: t0)
        var seen: [[UInt8: UInt8]] = []
        var t = t0
        while let v = desk.identifyValues(now: t, led1: 0x0F, led2: 0x10, tone: 0x09, time: 0x0A) {
            #expect(Set(v.keys) == [0x0F, 0x10, 0x09, 0x0A])
            if seen.last != v { seen.append(v) }
            t += .milliseconds(50)
        }
        #expect(t - t0 >= .seconds(3) && t - t0 < .milliseconds(3100))
        #expect(seen.count == 12, "a change every 250 ms for 3 s")
        #expect(desk.identifyEnded(now: t) && !desk.identifyEnded(now: t))
    }

    @Test func kickAndLock() {
        var desk = TeacherDesk<Int>(now: t0)
        desk.kick(3, host: 1, name: "Ann", now: t0)
        #expect(!desk.allows(3, host: 1, name: "Ann", now: t0 + .seconds(9)))
        #expect(desk.allows(3, host: 1, name: "Ann", now: t0 + .seconds(10)))
        #expect(desk.restricts && desk.forgetEndedKicks(now: t0 + .seconds(10)) && !desk.restricts, "ended holds are forgotten")
        desk.lockedTo = "Ben"
        #expect(!desk.allows(4, host: 2, name: "Ann", now: t0) && !desk.allows(4, host: 2, name: nil, now: t0) && desk.allows(5, host: 2, name: "Ben", now: t0))
    }
}
