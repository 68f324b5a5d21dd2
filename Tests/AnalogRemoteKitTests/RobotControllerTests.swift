import AnalogRemoteKit
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct RobotControllerTests {
    /// A task holding a controller is cancelled: the robot is at rest well before the receiver's
    /// failsafe (5 s here) would have stopped it: the stop came from the controller itself
    /// (neutral ×3 and a goodbye on release), not from silence — which the receiver's own count
    /// of failsafe trips says, whatever a loaded machine does to the clock.
    @Test func cancellingTheTaskStopsTheRobot() async throws {
        let receiver = try SimulatedReceiver(["--failsafe-ms", "5000"])
        let address = receiver.address
        // The holder runs on a thread of its own, so what is measured is the controller's answer
        // to the cancel, not how long a starved concurrency pool takes to resume the task.
        let executor = ThreadExecutor(name: "cancel-test")
        let holder = Task(executorPreference: executor) {
            // Patient: in the full suite, tests that block their threads can starve the
            // concurrency pool for many seconds before this task runs at all.
            let robot = try await RobotController(.address(address), displayName: "cancel-test", timeout: .seconds(60))
            robot.send(tilt: 0, buttons: .forward)
            // Held until the cancel: a sleep that ran out would release the robot first.
            try await Task.sleep(for: .seconds(3600))
            _ = robot
        }
        // Both looks from the executor's thread too: a pool frozen for a minute by blocking tests
        // (it happened) must neither make the first miss the drive nor stretch the stopwatch.
        let drove = await withTaskExecutorPreference(executor) {
            await receiver.wait(timeout: .seconds(60)) { $0.drivesForward }
        }
        #expect(drove, "never drove: \(receiver.process.stderr.suffix(400))")
        let cancelled = ContinuousClock.now
        holder.cancel()
        let rested = await withTaskExecutorPreference(executor) {
            await receiver.wait(timeout: .seconds(30)) { $0.atRest }
        }
        let took = ContinuousClock.now - cancelled
        print("at rest \(took) after the cancel")
        #expect(rested, "still driving 30 s after the cancel")
        #expect(receiver.failsafeTrips() == 0, "the failsafe stopped the robot, not the controller's cancel")
        let result = await holder.result
        #expect(result.isCancellation, "the task ended with \(result), not by the cancel")
    }

    /// close() sends neutral and returns once it is out: the board comes to rest by it, not by
    /// the receiver's failsafe (its count of trips stays 0).
    @Test func closeLeavesTheBoardAtRest() async throws {
        let receiver = try SimulatedReceiver(["--failsafe-ms", "5000"])
        let robot = try await RobotController(.address(receiver.address), displayName: "close-test")
        robot.send(tilt: 0, buttons: [.forward, .a])
        #expect(await receiver.wait { $0.drivesForward })
        await robot.close()
        #expect(await receiver.wait(timeout: .seconds(30)) { $0.atRest })
        #expect(receiver.failsafeTrips() == 0, "the failsafe stopped the robot, not close()")
    }

    /// The robot's state reports arrive as a sequence: driving once states flow.
    @Test func statesReportDriving() async throws {
        let receiver = try SimulatedReceiver()
        let robot = try await RobotController(.address(receiver.address), displayName: "state-test")
        robot.send(tilt: 0, buttons: .forward)
        let states = robot.states
        let seen = await within {
            var seen: [RobotState] = []
            for await state in states {
                seen.append(state)
                if state == .driving { break }
            }
            return seen
        }
        #expect(seen.last == .driving, "states: \(seen)")
        await robot.close()
    }

    /// A receiver under `--accept paired` refuses a controller with the wrong code (the
    /// initializer throws `.refused`), and takes one with the right code.
    @Test func pairedReceiverRefusesWithoutTheCode() async throws {
        let receiver = try SimulatedReceiver(["--accept", "paired", "--pairing-code", "4711"])
        do {
            _ = try await RobotController(.address(receiver.address), displayName: "no-code", pairingCode: "1234")
            Issue.record("a wrong pairing code was accepted")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .refused, "\(error)")
        }
        let robot = try await RobotController(.address(receiver.address), displayName: "with-code", pairingCode: "4711")
        robot.send(tilt: 0, buttons: .forward)
        #expect(await receiver.wait { $0.drivesForward })
        await robot.close()
    }

    @Test func badArgumentsThrowBeforeAnythingIsSent() async {
        await #expect(throws: AnalogRemoteError.self) {
            _ = try await RobotController(.address("no port here"), displayName: "x")
        }
        await #expect(throws: AnalogRemoteError.self) {
            _ = try await RobotController(.address("127.0.0.1:9"), displayName: "")
        }
        await #expect(throws: AnalogRemoteError.self) {
            _ = try await RobotController(.address("127.0.0.1:9"), displayName: "x", rate: 0)
        }
    }
}

extension Result {
    var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
