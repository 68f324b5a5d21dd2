import Receiver
import SystemIO
import RemoteWire
import Testing

/// `systemctl reload` with a new mapping: the owner keeps the robot, the motors stop at the old
/// addresses and the new mapping drives only after a resting state.
@Suite struct ReloadTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)

    @Test func aNewMappingKeepsTheOwnerStopsAndWaitsForRest() {
        let h = EngineHarness()
        _ = h.start()
        _ = h.send(.neutral, from: "A", ms: 0)
        #expect(h.send(Self.forward, from: "A", ms: 10).write?[0x22] == 0xC0)

        var faster = Mapping.kit
        faster.drive.speed = 100
        // The new mapping drives the motors at 0x30/0x31: the old addresses must be stopped too.
        faster.drive.left.address = 0x30
        faster.drive.right.address = 0x31
        let step = h.engine.replaceMapping(faster, at: h.clock.tick(ms: 20))
        let write = step.write
        #expect(write != nil)
        #expect(write?[0x22] == 0 && write?[0x23] == 0, "old motors not stopped: \(String(describing: write))")
        #expect(write?[0x30] == 0 && write?[0x31] == 0)
        #expect(h.engine.ownership.owner == "A")
        #expect(h.engine.failsafe.state == .waitingForNeutral(.reloaded))

        // Another controller is still ignored: the owner kept the robot.
        #expect(h.send(.neutral, from: "B", ms: 30).notices.contains(.ignored("B", owner: "A")))
        // Moving states from the owner are held until it rests once.
        #expect(h.send(Self.forward, from: "A", ms: 40).write == nil)
        _ = h.send(.neutral, from: "A", ms: 50)
        let driving = h.send(Self.forward, from: "A", ms: 60).write
        #expect(driving?[0x30] != 0 && driving?[0x30] != nil)
        #expect(driving?[0x22] == 0)
    }

    @Test func theSameMappingChangesNothing() {
        let h = EngineHarness()
        _ = h.start()
        _ = h.send(.neutral, from: "A", ms: 0)
        _ = h.send(Self.forward, from: "A", ms: 10)
        let step = h.engine.replaceMapping(.kit, at: h.clock.tick(ms: 20))
        #expect(step.write == nil)
        #expect(h.engine.failsafe.isDriving)
    }
}
