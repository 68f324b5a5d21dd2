// README.md
import AnalogRemoteKit
import Foundation

/// Drives the robot whose receiver listens at `address` (say "robot.local:27183"):
/// straight ahead for a second, then a right turn for half a second, then it stops.
func driveAndTurn(address: String) async throws {
    let robot = try await RobotController(.address(address), displayName: "getting-started")
    let reports = Task {
        for await state in robot.states { print("robot:", state) }   // .driving, …
    }
    robot.send(tilt: 0, buttons: .forward)          // the steady rate is kept for you
    try await Task.sleep(for: .seconds(1))
    robot.send(tilt: .pi / 8, buttons: .forward)    // half lock to the right
    try await Task.sleep(for: .milliseconds(500))
    await robot.close()                             // neutral, then goodbye
    reports.cancel()
}
