// docs/swift-api.md
import AnalogRemoteKit
import Foundation

func snippet2() async throws {
    let receiver = try await RobotReceiver(name: "wheelie", session: "class-7b", port: 27183)
    for await output in receiver.outputs {
        if output.isSafeState {
            print("brake")                                        // stop your motors at once
        } else {
            print(output.leftMotor, output.rightMotor)            // −127…127, positive = forward
        }
    }
}
