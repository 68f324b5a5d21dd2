import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// `receive --accept secret` and `control --secret` through the built binary (Protocol.md §8.3):
/// the secret shown as words (and a QR code), a driver with the words drives with every state
/// sealed, a wrong secret is one line and status 1, plain senders never move the robot.
@Suite(.serialized) struct SecretEndToEndTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)

    @Test func aControllerWithTheShownWordsDrivesAndPlainPacketsNeverDo() throws {
        let r = try ClassroomReceiver(["--accept", "secret", "--failsafe-ms", "5000"])
        #expect(r.process.waitForOutput { out, _ in out.contains("\nsecret ") })
        let line = try #require(r.process.stdout.split(separator: "\n").first { $0.hasPrefix("secret ") })
        let words = String(line.dropFirst("secret ".count))
        #expect(words.split(separator: " ").count == 12)
        #expect(try RobotSecret.parse(words).get().words == words)
        #expect(r.process.stdout.contains("\u{1B}[") && r.process.stdout.contains("▀"), "no QR code on stdout")

        // A plain sender, even one sending valid states first, is ignored and denied.
        let plain = try ClassroomPeer(port: r.port)
        try plain.send(.neutral)
        try plain.send(Self.forward)
        #expect(try plain.pump { _ in !plain.denies.isEmpty })
        #expect(plain.denies.first?.text.text.contains("--secret") == true)

        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--secret", words.uppercased(),
                                                      "--name", "Ann", "--input", "stdin"], stdin: true)
        #expect(control.waitForOutput { _, err in err.contains("accepted by") }, "\(control.stderr)")
        control.write("0 none\n")
        control.write("0 forward\n")
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap }, "\(r.process.stderr)\n\(control.stderr)")
        // The plain sender's forward again: still ignored (the robot is owned, and plain is refused).
        try plain.send(ControllerState(angle: 0, buttons: .backward))
        control.closeStdin()
        #expect(control.wait() == 0, "\(control.stderr)")
        #expect(r.process.waitForOutput { _, err in err.contains("owner said bye") }, "\(r.process.stderr)")
        #expect(!r.maps.contains(ClassroomReceiver.kitMap(left: 0x40, right: 0xC0)), "a plain backward moved the robot")
        let s = try r.stop()
        #expect(s["ignored"]! >= 3, "\(s)")
    }

    @Test func aWrongSecretIsOneLineAndStatus1AndCounted() throws {
        let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"
        let r = try ClassroomReceiver(["--accept", "secret", "--secret", words])
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)",
                                                      "--secret", "acorn actor adult agent alarm album alley amber angle ankle apple zebra",
                                                      "--input", "stdin"], stdin: true)
        control.write("0 forward\n")
        #expect(control.wait() == 1, "still running: \(control.stderr)")
        // The warning for words typed on the command line (docs/security.md), the robot's state
        // (REFUSED, Protocol.md §7.9) as a log line, then the reason as the last line.
        let lines = control.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines.first?.hasPrefix("analog-remote: warning: --secret on the command line") == true
                && lines[1].hasPrefix("warning: robot: REFUSED: wrong secret"), "\(control.stderr)")
        #expect(lines.last == "analog-remote: 127.0.0.1:\(r.port) refused this controller: wrong secret: check the 12 words against the robot's screen")
        #expect(r.process.waitForOutput { _, err in err.contains("wrong secret tried") && err.contains("failed=1") }, "\(r.process.stderr)")
        let s = try r.stop()
        #expect(s["state"] == 0, "a controller with --secret sends no state before it is accepted")
        #expect(r.process.stderr.contains("wrong_attempts=1"), "\(r.process.stderr)")
    }

    @Test(arguments: [["--secret", "a b c"], ["--secret", "acorn actor adult agent alarm album alley amber angle ankle apple apron", "--pair", "1"]])
    func badSecretArgumentsAreUsageErrors(arguments: [String]) throws {
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:9"] + arguments)
        #expect(control.wait() == 64)
        #expect(control.stderr.contains("--secret"), "\(control.stderr)")
    }
}
