import BoardLink
import BoardProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite struct BoardConnectionInProcessTests {
    @Test func theSimulatedBoardTakesTheSafeStateThenTheDesiredValues() throws {
        let events = EventLog<BoardEvent>()
        var options = BoardOptions()
        options.sensorRate = 0   // the count below is the writer's commands only
        let board = try BoardConnection(spec: .simulated, profile: .kit, options: options) { events.append($0) }
        defer { board.close() }
        board.setDesired([0x22: 0xC0, 0x23: 0x40, 0x0F: 100])
        #expect(eventually { board.snapshot.confirmed[0x22] == 0xC0 && board.snapshot.confirmed[0x0F] == 100 })
        let s = board.snapshot
        #expect(s.isConnected && s.device == "sim" && s.lastError == nil)
        #expect(s.commandsSent == 9, "the probe, 3 safe-state runs each read back (the first write of those addresses), then 0x0f and 0x22-0x23: \(s)")
        #expect(s.identity == BoardIdentity(productID: 1, version: 1, mapSize: 36) && s.profile == .kit)
        #expect(events.all == [.connected(device: "sim")])
        #expect(board.writeSafeState(timeout: .seconds(2)))
        for (a, v) in MemoryMapProfile.kit.safeState { #expect(board.snapshot.confirmed[a] == v) }
    }

    /// The motors profile on a stock board: refused after the probe with one line; only the
    /// stock safe state is written, never an address past 0x21.
    @Test func theMotorsProfileOnAStockBoardIsRefusedAfterItsSafeState() throws {
        let events = EventLog<BoardEvent>()
        let board = try BoardConnection(spec: .simulated(.stock), profile: .kit) { events.append($0) }
        defer { board.close() }
        board.setDesired([0x22: 0xC0, 0x23: 0x40, 0x0F: 100])
        let refused = try #require(board.waitUntilIdentified(timeout: .seconds(5)))
        #expect(refused.identity == BoardIdentity(productID: 1, version: 1, mapSize: 34))
        let line = try #require(refused.refusal)
        #expect(line.hasPrefix("sim:stock: the motors profile writes 0x22 but this board's memory map has 34 bytes (0x00–0x21"), "\(line)")
        #expect(eventually { events.all.contains(.refused(device: "sim:stock", reason: line)) })
        #expect(board.writeSafeState(timeout: .seconds(2)))
        let confirmed = board.snapshot.confirmed
        #expect(confirmed.keys.allSatisfy { $0 <= 0x21 } && confirmed[0x0F] == 0, "\(confirmed)")
    }

    @Test func writeSafeStateWaitsForAWriteAlreadyOnTheWire() throws {
        let board = try BoardConnection(spec: .simulated, profile: .kit)
        defer { board.close() }
        #expect(board.writeSafeState(timeout: .seconds(2)))
        for v in 1...50 as ClosedRange<UInt8> { board.setDesired([0x22: v]) }
        #expect(board.writeSafeState(timeout: .seconds(2)))
        #expect(board.snapshot.confirmed[0x22] == 0)
    }

    @Test func closeIsIdempotentAndStopsWriting() throws {
        let board = try BoardConnection(spec: .simulated, profile: .kit)
        board.close()
        board.close()
        #expect(!board.writeSafeState(timeout: .milliseconds(200)))
    }

    /// close() and writeSafeState() called from inside onEvent (on the connection's own thread)
    /// must not wait for that thread.
    @Test func callsFromInsideOnEventDoNotDeadlock() throws {
        final class Box: Sendable {
            let connection = Mutex<BoardConnection?>(nil)
            let results = Mutex<[Bool]>([])
        }
        let box = Box()
        let board = try BoardConnection(spec: .simulated, profile: .kit) { event in
            guard case .connected = event else { return }
            _ = eventually(timeout: .seconds(5)) { box.connection.withLock { $0 != nil } }
            let c = box.connection.withLock { $0 }
            box.results.withLock { $0.append(c?.writeSafeState(timeout: .seconds(5)) ?? true) }
            c?.close()
            box.results.withLock { $0.append(true) }
        }
        box.connection.withLock { $0 = board }
        #expect(eventually(timeout: .seconds(5)) { box.results.withLock { $0 } == [false, true] })
        #expect(eventually { !board.snapshot.isConnected })
        board.close()
        box.connection.withLock { $0 = nil }
    }

    @Test func aBadProfileIsRefusedBeforeOpening() {
        #expect(throws: BoardLinkError(.badProfile, device: "sim", "sim: bad memory-map profile: led1 and led2 share address 0x0f")) {
            try BoardConnection(spec: .simulated, profile: MemoryMapProfile(led2: 0x0F))
        }
    }

    @Test func aMissingSerialDeviceFailsAtOnceNamingDeviceCauseAndFix() {
        let start = ContinuousClock.now
        do {
            _ = try BoardConnection(spec: .serial(path: "/dev/ttyACM-does-not-exist", baud: 115200), profile: .kit)
            Issue.record("opened a device that does not exist")
        } catch {
            #expect(error.isDeviceUnavailable)
            #expect(error.message == "serial:/dev/ttyACM-does-not-exist: no such device (is the board plugged in? `analog-remote boards` lists candidates)")
        }
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd"), "this machine has sound devices"))
    func midiWithoutSoundDevicesFailsAtOnceWithOneClearLine() {
        let start = ContinuousClock.now
        do {
            _ = try BoardConnection(spec: try BoardSpec("midi:hw:0,0,0"), profile: .kit)
            Issue.record("opened ALSA without /dev/snd")
        } catch {
            #expect(error.kind == .deviceUnavailable)
            #expect(error.message.hasPrefix("midi:hw:0,0,0: no ALSA sound devices on this machine (/dev/snd is missing"))
            #expect(!error.message.contains("\n"))
        }
        #expect(ContinuousClock.now - start < .seconds(2))
    }
}
