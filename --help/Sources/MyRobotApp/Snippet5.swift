// docs/swift-api.md
import AnalogRemoteKit
import Foundation

func snippet5() async throws {
    do {
        let robot = try await RobotController(.address("robot.local:27183"), displayName: "Ada")
        robot.send(tilt: 0, buttons: .forward)
        try await Task.sleep(for: .seconds(1))
        await robot.close()
    } catch let error as AnalogRemoteError {
        switch error.code {
        case .refused: print("the receiver said no:", error)
        case .timedOut, .peerUnreachable: print("nothing answers there:", error)
        default: print(error)
        }
    } catch is CancellationError {
        print("cancelled; the robot is stopped")
    }
}
