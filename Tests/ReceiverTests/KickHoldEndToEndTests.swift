import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Kick holds (Protocol.md §7.10): a kicked student who restarts at once — a new process, so a
/// new source port — cannot take the robot back during the hold; another student can.
/// The hold is 10 s and not configurable, so these assert on the refusal, not on the clock:
/// every step after the kick ends well inside the hold.
@Suite(.serialized) struct KickHoldEndToEndTests {
    typealias Dashboard = TeacherWatchEndToEndTests.Dashboard
    static let forward = RunningReceiver.kitMap(left: 0xC0, right: 0x40)
    static func drives(_ map: [UInt8]) -> Bool { map[0x22] == forward[0x22] && map[0x23] == forward[0x23] }

    func control(_ port: UInt16, name: String) throws -> ChildProcess {
        let c = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(port)", "--name", name, "--input", "stdin"],
                                 stdin: true)
        c.write("0\n0 forward\n")
        return c
    }

    @Test func aKickedControllerRestartedUnderItsNameIsRefusedAndAnotherStudentDrives() throws {
        _ = TeacherWatchEndToEndTests.macKey
        let r = try RunningReceiver(["--name", "robot-t", "--teacher-key", TeacherWatchEndToEndTests.key])
        defer { r.process.signal(SIGTERM); _ = r.process.wait() }
        let ann = try control(r.port, name: "Ann")
        defer { ann.signal(SIGTERM); _ = ann.wait() }
        #expect(r.waitForMap(timeout: .seconds(10), Self.drives), "Ann never drove")

        try Dashboard(port: r.port).send(.kick)
        #expect(ann.wait(timeout: .seconds(10)) != 0 && ann.stderr.contains("the teacher freed this robot"), "\(ann.stderr)")
        #expect(r.waitForMap(RunningReceiver.motorsStopped), "the kick did not stop the motors")
        let afterKick = r.maps.count

        // Restarted at once, same name, new port: refused with the reason, never drives.
        let again = try control(r.port, name: "Ann")
        defer { again.signal(SIGTERM); _ = again.wait() }
        let status = again.wait(timeout: .seconds(8))
        #expect(status != nil && status != 0, "the restarted controller was not refused: \(again.stderr)")
        #expect(again.stderr.contains("the teacher freed this robot from Ann: it can be taken back in"), "\(again.stderr)")
        #expect(r.process.waitForOutput { _, err in err.contains("refused a kicked student") }, "\(r.process.stderr.suffix(800))")
        #expect(r.maps.dropFirst(afterKick).allSatisfy(RunningReceiver.motorsStopped), "the kicked student drove again")

        // Another student from the same address (a phone server, a shared laptop) is not held.
        let ben = try control(r.port, name: "Ben")
        defer { ben.signal(SIGTERM); _ = ben.wait() }
        #expect(r.waitForMap(timeout: .seconds(5), Self.drives), "Ben could not drive: \(ben.stderr)")
    }

    /// A plain 8-byte sender has no name: once kicked, its address is held on every port.
    @Test func aKickedPlainSenderIsHeldOnEveryPortOfItsAddress() throws {
        _ = TeacherWatchEndToEndTests.macKey
        let r = try RunningReceiver(["--name", "robot-t", "--teacher-key", TeacherWatchEndToEndTests.key])
        var running = true
        defer { if running { r.process.signal(SIGTERM); _ = r.process.wait() } }
        let first = try TestController(port: r.port)
        try first.send(.neutral)
        try first.send(ControllerState(angle: 0, buttons: .forward))
        #expect(r.waitForMap(Self.drives), "the plain sender never drove")
        try Dashboard(port: r.port).send(.kick)
        #expect(r.waitForMap(RunningReceiver.motorsStopped), "the kick did not stop the motors")
        let afterKick = r.maps.count
        let restarted = try TestController(port: r.port)
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(1) {
            try restarted.send(ControllerState(angle: 0, buttons: []))
            try restarted.send(ControllerState(angle: 0, buttons: .forward))
            Thread.sleep(forTimeInterval: 0.02)
        }
        r.process.signal(SIGTERM)
        running = false
        #expect(r.process.wait() == 0)
        #expect(r.maps.dropFirst(afterKick).allSatisfy(RunningReceiver.motorsStopped), "a plain sender from the kicked address drove again")
        let s = try #require(r.summary)
        #expect((s["ignored"] ?? 0) > 0 || (s["held"] ?? 0) > 0, "\(s)")
    }
}
