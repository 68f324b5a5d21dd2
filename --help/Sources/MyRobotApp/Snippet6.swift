// Sources/AnalogRemoteKit/AnalogRemoteKit.docc/Buttons.md
import AnalogRemoteKit
import Foundation

func snippet6() async throws {
    let robot = try await RobotController(.address("robot.local:27183"), displayName: "Ada")
    robot.send(tilt: 0, buttons: [.forward, .a])   // forward with LED1 on
    print(robot.receiverName, Buttons([.forward, .a]))   // "forward+a"
}
