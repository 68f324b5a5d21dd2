import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Issue 19, item 1: a flood from many source ports neither trips the failsafe of a live owner
/// nor hands the robot over — not even when the owner's link really drops for longer than the
/// failsafe timeout in the middle of it (the reclaim window keeps the robot for the owner).
///
/// Loopback only, bounded in time (about 2 s of flooding) and in count (at most 600,000
/// datagrams). Every flood source sends valid *resting* states with button A held (LED1 on the
/// kit board) and 20-byte junk: a flood source that ever owned the robot would light LED1, so
/// "no flood source ever owned it" is read off the board's own trace, not off rate-limited logs.
@Suite(.serialized) struct FloodOwnershipTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)
    static let forwardMap = RunningReceiver.kitMap(left: 0xC0, right: 0x40)
    static let floodState = StatePacket.encode(ControllerState(angle: 0, buttons: .a))
    static let junk = [UInt8](repeating: 0x5A, count: 20)

    @Test func aManySourceFloodNeverTakesTheRobotFromItsOwner() throws {
        let r = try RunningReceiver(["--failsafe-ms", "250", "--reclaim-s", "3"])
        let owner = try TestController(port: r.port)
        try owner.send(.neutral)
        try owner.send(Self.forward)
        #expect(r.waitForMap { $0 == Self.forwardMap }, "board never showed forward: \(r.process.stdout.suffix(300))")

        let flooders = try (0..<256).map { _ in try TestController(port: r.port) }
        var sent = 0
        let cap = 600_000
        // Sends one round of the flood (one datagram per source), non-blocking: a full socket
        // buffer drops the datagram, as it would for an attacker who does not care.
        func floodRound(_ n: Int) {
            for (i, f) in flooders.enumerated() where sent < cap {
                _ = try? f.socket.send((n + i) % 2 == 0 ? Self.floodState : Self.junk, to: f.target)
                sent += 1
            }
        }
        /// Floods for `duration`, the owner sending forward every 20 ms unless `ownerSilent`.
        func flood(for duration: Duration, ownerSilent: Bool = false) throws {
            let end = ContinuousClock.now + duration
            var nextOwner = ContinuousClock.now
            var n = 0
            while ContinuousClock.now < end {
                if !ownerSilent, ContinuousClock.now >= nextOwner {
                    try owner.send(Self.forward)
                    nextOwner += .milliseconds(20)
                }
                floodRound(n)
                n += 1
            }
        }

        // Phase A: a live owner under the flood.
        try flood(for: .seconds(1))
        // Phase B: the owner's link drops for 400 ms (> the 250 ms failsafe) while the flood
        // goes on; then it comes back (resting first, as after every failsafe) and drives on.
        try flood(for: .milliseconds(400), ownerSilent: true)
        try owner.send(.neutral)
        try flood(for: .milliseconds(500))
        #expect(r.waitUntilDrained())
        // Still the owner's: its resting state and forward drive (a flood source's would light LED1).
        try owner.send(.neutral)
        try owner.send(Self.forward)
        #expect(r.waitForMap { $0 == Self.forwardMap }, "the owner lost the robot: board \(r.maps.last.map { Hex.string($0) } ?? "?")")

        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
        let s = try #require(r.summary, "no summary: \(r.process.stdout.suffix(300))")
        let ledOn = r.maps.filter { $0[0x0F] != 0 }
        #expect(ledOn.isEmpty, "a flood source drove the robot (LED1 lit in \(ledOn.count) board states)")
        // The only failsafe trip is the owner's real 400 ms silence: the flood itself tripped none.
        #expect(s["failsafes"] == 1, "failsafe trips \(s["failsafes"] ?? -1) (sent \(sent) flood datagrams; summary \(s))")
        #expect(sent > 20_000, "the flood was too weak to mean anything: \(sent)")
    }
}
