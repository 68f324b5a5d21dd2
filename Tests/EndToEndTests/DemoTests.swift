import Foundation
import TestSupport
import Testing

/// `analog-remote demo`, run as the README tells a new user to: three real processes, the
/// simulated board's changes printed, the motors stopped at the end.
@Suite struct DemoTests {
    @Test func demoDrivesTheSquareAndEndsStopped() throws {
        let run = try ChildProcess(analogRemote: ["demo", "--speed", "8"])
        #expect(run.wait(timeout: .seconds(60)) == 0, "stderr: \(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        let changes = lines.filter { $0.contains("  W ") }
        #expect(changes.filter { $0.hasSuffix("forward, turning right") }.count >= 4, "four corners: \(run.stdout)")
        #expect(changes.contains { $0.contains("W 0f ff") && $0.contains("●") }, "the horn (A → LED1) at a corner")
        // The script backs up with a left tilt: heading turns counterclockwise (left).
        #expect(changes.contains { $0.hasSuffix("backward, turning left") }, "\(run.stdout)")
        #expect(changes.last?.hasSuffix("stopped") == true)
        #expect(lines.contains { $0.hasPrefix("demo: receiver summary packets=") && $0.contains(" bad=0 ") })
        #expect(lines.last == "demo: done — the controller sent neutral on its way out and the board's motors are at 0.")
    }

    /// The script the demo plays is the one shipped as examples/drive-square.script.
    @Test func demoScriptIsTheShippedExample() throws {
        let run = try ChildProcess(analogRemote: ["demo", "--print-script"])
        #expect(run.wait() == 0)
        let file = try String(contentsOf: Paths.repositoryFile("examples/drive-square.script"), encoding: .utf8)
        #expect(run.stdout == file)
    }

    @Test(arguments: ["0", "100", "nan"])
    func speedOutOfRangeIsAUsageError(speed: String) throws {
        let run = try ChildProcess(analogRemote: ["demo", "--speed", speed])
        #expect(run.wait() == 64)
        #expect(run.stderr.contains("--speed"))
    }
}
