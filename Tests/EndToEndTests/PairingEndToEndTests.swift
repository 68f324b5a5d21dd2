import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// `receive --accept first|any|paired` and `control --name/--pair` through the built binary
/// (Protocol.md §7.4): plain 8-byte senders as before, pairing, denies with reasons, the rate limit.
@Suite(.serialized) struct PairingEndToEndTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)

    @Test(arguments: ["first", "any"])
    func aPlainSenderDrivesExactlyAsBefore(accept: String) throws {
        let r = try ClassroomReceiver(["--accept", accept])
        let c = try ClassroomPeer(port: r.port)
        try c.send(.neutral)
        try c.send(Self.forward)
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap })
        try c.readAvailable()
        #expect(c.delivered.isEmpty, "nothing comes back to a plain sender: \(c.delivered)")
        let s = try r.stop()
        #expect(s["applied"] == 2 && s["control"] == 0 && s["limited"] == 0 && s["ignored"] == 0)
    }

    @Test func pairedDeniesAPlainSenderWithAReasonAndNeverMoves() throws {
        let r = try ClassroomReceiver(["--accept", "paired", "--pairing-code", "4711"])
        #expect(r.process.waitForOutput { _, err in err.contains("pairing code 4711") })
        let c = try ClassroomPeer(port: r.port)
        try c.send(.neutral)
        try c.send(Self.forward)
        #expect(try c.pump { _ in !c.denies.isEmpty })
        let deny = try #require(c.denies.first)
        #expect(deny.reason == .pairingRequired)
        #expect(deny.text.text.contains("--pair"), "\(deny.text)")
        for _ in 0..<10 { try c.send(Self.forward) }
        // More states within the second: no second deny (at most one a second per source).
        try c.pump(timeout: .milliseconds(300)) { _ in false }
        #expect(c.denies.count == 1)
        #expect(r.maps.allSatisfy { $0 == ClassroomReceiver.kitMap() }, "the robot moved")
        let s = try r.stop()
        #expect(s["ignored"] == 12 && s["applied"] == 0)
    }

    /// The pairing code is random when not given; it is in the log, and a controller started with
    /// it drives, shown by its display name; its bye frees the robot.
    @Test func aControllerWithTheShownCodeDrives() throws {
        let r = try ClassroomReceiver(["--accept", "paired", "--failsafe-ms", "5000"])
        #expect(r.process.waitForOutput { _, err in err.contains("pairing code ") })
        let code = try #require(r.process.stderr.split(separator: "\n").first { $0.contains("pairing code ") }
            .flatMap { $0.split(separator: " ").first { $0.count == 4 && $0.allSatisfy(\.isNumber) } })
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--pair", String(code),
                                                      "--name", "Ann", "--input", "stdin"], stdin: true)
        // States wait for the accept; then a resting one first, as always.
        #expect(control.waitForOutput { _, err in err.contains("accepted by") }, "\(control.stderr)")
        control.write("0 none\n")
        control.write("0 forward\n")
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap }, "\(r.process.stderr)\n\(control.stderr)")
        #expect(r.process.waitForOutput { _, err in err.contains("controller owns the robot [address=127.0.0.1:") && err.contains("controller=Ann]") },
                "\(r.process.stderr)")
        control.closeStdin()
        #expect(control.wait() == 0, "\(control.stderr)")
        #expect(r.process.waitForOutput { _, err in err.contains("owner said bye") }, "\(r.process.stderr)")
        #expect(r.waitForMap { ClassroomReceiver.motorsStopped($0) })
        _ = try r.stop()
    }

    @Test func aWrongCodeIsPrintedAsOneLineAndTheControllerExits() throws {
        let r = try ClassroomReceiver(["--accept", "paired", "--pairing-code", "4711"])
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--pair", "1111",
                                                      "--input", "stdin"], stdin: true)
        control.write("0 forward\n")
        #expect(control.wait() == 1, "still running: \(control.stderr)")
        // The robot's state (REFUSED, Protocol.md §7.9) as a log line, then the deny's reason as the last line.
        let lines = control.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(control.stderr)")
        #expect(lines.first?.hasPrefix("warning: robot: REFUSED: wrong pairing code \"1111\"") == true, "\(control.stderr)")
        #expect(lines.last == "analog-remote: 127.0.0.1:\(r.port) refused this controller: wrong pairing code \"1111\": check the code on the robot's screen")
        let s = try r.stop()
        #expect(s["state"] == 0, "a paired hello holds its states until accepted")
        #expect(r.maps.allSatisfy { $0 == ClassroomReceiver.kitMap() })
    }

    @Test func aNamedControllerWithoutACodeIsDeniedByAPairedReceiver() throws {
        let r = try ClassroomReceiver(["--accept", "paired"])
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--name", "Bob",
                                                      "--input", "stdin"], stdin: true)
        control.write("0 none\n")
        #expect(control.wait() == 1)
        #expect(control.stderr.hasSuffix("this robot needs a pairing code: start the controller with --pair CODE (the code is on the robot's screen)\n"))
        #expect(control.stderr.filter { $0 == "\n" }.count == 2, "the REFUSED state, then the reason: \(control.stderr)")
    }

    /// A flood from one source (far over 2000/s) is cut by the rate limit before decoding, while
    /// the owner's states (50 at a time) all go through.
    @Test func aFloodFromOneSourceCannotStarveTheOwner() throws {
        let r = try ClassroomReceiver(["--failsafe-ms", "5000"])
        let owner = try ClassroomPeer(port: r.port)
        let flooder = try ClassroomPeer(port: r.port)
        try owner.send(.neutral)
        try owner.send(Self.forward)
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap })
        var ownerSent = 2, flood = 0
        let moving = ControllerState(angle: -1, buttons: [.backward, .b])
        for round in 0..<20 {
            // 400 at once, twice the burst: the receiver reads them in a few milliseconds, far
            // faster than 2000/s refills the bucket.
            for _ in 0..<400 { try flooder.send(moving); flood += 1 }
            let state = ControllerState(angle: 0, buttons: round % 2 == 0 ? [.forward, .a] : .forward)
            try owner.send(state)
            ownerSent += 1
            #expect(r.waitForMap { $0 == ClassroomReceiver.kitMap(left: 0xC0, right: 0x40, led1: round % 2 == 0 ? 255 : 0) },
                    "round \(round): the owner's state was not applied")
            #expect(r.waitUntilDrained())
        }
        let drops = try #require(r.socketStats()).drops
        let s = try r.stop()
        #expect(s["applied"] == ownerSent, "every state of the owner applied")
        #expect(s["limited"]! > 0, "8000 datagrams in bursts of 400 from one source must hit the 2000/s limit (burst 200)")
        if drops == 0 {
            #expect(s["ignored"]! + s["limited"]! == flood)
            #expect(s["packets"] == ownerSent + flood)
        }
        #expect(!r.maps.contains { $0[0x10] == 255 }, "a flooded state reached the board")
    }
}
