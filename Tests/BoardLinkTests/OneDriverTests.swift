import BoardLink
import BoardProtocol
import Foundation
import TestSupport
import Testing

/// One driver per board: a second ``BoardConnection`` to a tty another one holds is refused at
/// open with one line, and writes nothing; the holder's death (or close) frees the board.
@Suite struct OneDriverTests {
    @Test func aSecondDriverIsRefusedUntouchedAndTheBoardIsFreeOnceTheFirstCloses() throws {
        let sim = try BoardSimProcess([])
        let spec = BoardSpec.serial(path: sim.path, baud: 115_200)
        let first = try BoardConnection(spec: spec, profile: .kit)
        defer { first.close() }
        #expect(first.waitUntilIdentified(timeout: .seconds(10))?.profile == .kit)
        #expect(first.writeSafeState(timeout: .seconds(5)))
        first.setDesired([0x22: 0xC0, 0x23: 0x40])
        #expect(sim.waitForMap { $0.count > 0x23 && $0[0x22] == 0xC0 && $0[0x23] == 0x40 })
        // The first link's sensor reads go on all along: count the other commands.
        let notReads = { sim.commands.filter { $0 != SensorBlock.read.text }.count }
        let commands = notReads()

        do {
            let second = try BoardConnection(spec: spec, profile: .kit)
            second.close()
            Issue.record("a second driver opened a board the first one holds")
        } catch {
            #expect(error.kind == .deviceUnavailable)
            #expect(error.message == "\(spec.device): in use by another analog-remote process driving this board (a running receiver: "
                    + "it leaves the board at rest itself when it stops, e.g. `systemctl stop analog-remote`); nothing was written",
                    "\(error.message)")
        }
        // Nothing reached the board from the refused one, and the first still drives it.
        usleep(200_000)
        #expect(notReads() == commands, "\(sim.commands.suffix(3))")
        first.setDesired([0x22: 0x9C])
        #expect(sim.waitForMap { $0[0x22] == 0x9C })

        // A probe tool (BoardClient) only looks: it is not refused.
        let client = try BoardClient(spec: spec)
        client.close()

        first.close()
        let third = try BoardConnection(spec: spec, profile: .kit)
        defer { third.close() }
        #expect(third.writeSafeState(timeout: .seconds(5)))
        #expect(sim.waitForMap { $0[0x22] == 0 && $0[0x23] == 0 })
    }
}
