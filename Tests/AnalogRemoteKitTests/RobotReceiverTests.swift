import AnalogRemoteKit
import Foundation
import Testing

@Suite(.serialized) struct RobotReceiverTests {
    /// A controller drives an embedded receiver: the program's code sees both wheels forward and
    /// LED 1 lit (button A), then the safe state when the controller closes.
    @Test func controllerDrivesOurOutput() async throws {
        let receiver = try await RobotReceiver(name: "test-robot", port: 0, advertise: false, stopsOnSignals: false)
        let outputs = receiver.outputs
        let robot = try await RobotController(.address("127.0.0.1:\(receiver.port)"), displayName: "driver")
        robot.send(tilt: 0, buttons: [.forward, .a])
        let (driven, rested) = await within {
            var driven: RobotOutput?
            for await output in outputs {
                if driven == nil, output.leftMotor > 0, output.rightMotor > 0 {
                    driven = output
                    await robot.close()
                } else if driven != nil, output.leftMotor == 0, output.rightMotor == 0 {
                    return (driven, Optional(output))
                }
            }
            return (driven, nil)
        }
        #expect(driven?.leftMotor == 64 && driven?.rightMotor == 64, "\(String(describing: driven))")
        #expect(driven?.lights.first == 255)
        #expect(rested != nil)
        await receiver.close()
    }

    /// Closing the receiver ends `outputs` with the safe state last.
    @Test func closeEndsWithTheSafeState() async throws {
        let receiver = try await RobotReceiver(name: "closing", port: 0, advertise: false, stopsOnSignals: false)
        let outputs = receiver.outputs
        await receiver.close()
        let last = await within {
            var last: RobotOutput?
            for await output in outputs { last = output }
            return last
        }
        #expect(last?.isSafeState == true)
    }

    @Test func aTakenPortIsOneClearError() async throws {
        let first = try await RobotReceiver(name: "one", port: 0, advertise: false, stopsOnSignals: false)
        do {
            _ = try await RobotReceiver(name: "two", port: first.port, advertise: false, stopsOnSignals: false)
            Issue.record("a second receiver bound the same port")
        } catch {
            #expect(error.code == .networkUnavailable, "\(error)")
        }
        await first.close()
    }
}
