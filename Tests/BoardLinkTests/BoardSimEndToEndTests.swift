#if canImport(Glibc)
import Glibc
#endif
import BoardLink
import BoardProtocol
import Foundation
import TestSupport
import Testing

/// The client and the connection drive the built `analog-remote board-sim` through a real
/// pseudo-terminal, in both framings.
@Suite(.serialized) struct BoardSimEndToEndTests {
    enum Framing: String, CaseIterable { case serial, midiSerial }

    func spec(_ framing: Framing, _ path: String) -> BoardSpec {
        framing == .serial ? .serial(path: path, baud: 115200) : .midiSerial(path: path, baud: 115200)
    }
    func simArguments(_ framing: Framing) -> [String] { framing == .serial ? [] : ["--midi"] }

    /// The default 100 ms assumes an idle machine; these tests are not about timeouts.
    var patient: BoardOptions {
        var o = BoardOptions()
        o.replyTimeout = .seconds(1)
        return o
    }

    @Test(arguments: Framing.allCases)
    func valuesReadBackWithREqualValuesWritten(framing: Framing) throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(simArguments(framing) + ["--link", dir.path + "/board"])
        #expect(sim.path == dir.path + "/board")
        let client = try BoardClient(spec: spec(framing, sim.path), options: patient)
        defer { client.close() }
        #expect(try client.perform(.write(address: 0x22, bytes: [0x81, 0x7F])) == .done)
        #expect(try client.perform(.write(address: 0x0F, bytes: [0x64, 0xC8])) == .done)
        #expect(try client.read(address: 0x22, count: 2) == [0x81, 0x7F])
        #expect(try client.read(address: 0x0F, count: 2) == [0x64, 0xC8])
        let map = try client.read(address: 0, count: 36)
        #expect(map.count == 36 && map[0] == 1 && map[0x22] == 0x81)
        #expect(try client.perform(.flash) == .flashed)
        #expect(try client.perform(.eepromRead(address: 0x22, count: 2)) == .values([0x81, 0x7F]))
        #expect(eventually { sim.commands.count == 7 })
        #expect(Array(sim.commands.prefix(2)) == ["W 22 817f", "W 0f 64c8"])
        // The firmware's loop rewrites random (0x05) and the timer (0x06) between commands.
        func steady(_ m: [UInt8]?) -> [UInt8]? { m.map { m in m.enumerated().map { [0x05, 0x06].contains($0.offset) ? 0 : $0.element } } }
        #expect(steady(sim.maps.last) == steady(map))
        #expect(sim.overlaps == 0)
    }

    @Test(arguments: Framing.allCases)
    func theConnectionWritesTheSafeStateFirstThenTheDesiredValues(framing: Framing) throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(simArguments(framing) + ["--link", dir.path + "/board"])
        // No sensor reads: the count of commands sent is compared with the board's below, and a
        // read going out between the two looks made them differ by one (under load, once).
        var options = patient
        options.sensorRate = 0
        let board = try BoardConnection(spec: spec(framing, sim.path), profile: .kit, options: options)
        board.setDesired(MemoryMapProfile.kit.motors(left: -100, right: 100).merging([0x0F: 255]) { $1 })
        #expect(sim.waitForMap { $0[0x22] == 0x9C && $0[0x23] == 100 && $0[0x0F] == 255 })
        #expect(beginsWithSafeState(sim.commands), "\(sim.commands)")
        #expect(board.writeSafeState(timeout: .seconds(2)))
        #expect(sim.waitForMap { $0[0x22] == 0 && $0[0x23] == 0 && $0[0x0F] == 0 })
        let sent = board.snapshot.commandsSent
        #expect(sent == sim.commands.count, "every command reached the board, none twice")
        board.close()
        let client = try BoardClient(spec: spec(framing, sim.path), options: patient)
        #expect(try client.read(address: 0x22, count: 2) == [0, 0])
        #expect(sim.overlaps == 0)
    }

    /// A 9600-baud board (~1 ms a byte, ~15 ms a write) fed a new motor value every millisecond:
    /// the board never sees a second command before its prompt is out, intermediate values are
    /// skipped, and the last value always arrives.
    @Test func aSlowBoardGetsTheLatestValueAndNeverTwoCommandsAtOnce() throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--baud", "9600", "--link", dir.path + "/board"])
        // A generous reply timeout: this test is about one command outstanding, and a timeout on
        // a loaded machine would (rightly) let the next command go before the late prompt.
        let board = try BoardConnection(spec: .serial(path: sim.path, baud: 9600), profile: .kit, options: patient)
        defer { board.close() }
        let updates = 400
        for i in 0..<updates {
            board.setDesired(MemoryMapProfile.kit.motors(left: Int8(truncatingIfNeeded: -i), right: Int8(truncatingIfNeeded: i)))
            board.setDesired([0x0F: UInt8(truncatingIfNeeded: i * 7)])
            usleep(1_000)
        }
        let last = updates - 1
        board.setDesired([0x22: UInt8(truncatingIfNeeded: -last), 0x23: UInt8(truncatingIfNeeded: last), 0x0F: 0x5A])
        #expect(sim.waitForMap(timeout: .seconds(15)) {
            $0[0x22] == UInt8(truncatingIfNeeded: -last) && $0[0x23] == UInt8(truncatingIfNeeded: last) && $0[0x0F] == 0x5A
        })
        #expect(sim.overlaps == 0, "a command was sent before the previous prompt")
        let motorWrites = sim.commands.filter { $0.hasPrefix("W 22 ") }.count
        #expect(motorWrites > 3 && motorWrites < updates / 2, "intermediate states skipped, not queued (\(motorWrites) motor writes for \(updates) updates)")
        #expect(board.snapshot.commandsFailed == 0, "\(board.snapshot)")
    }

    /// board-sim killed mid-stream: the connection reports it, reopens the same --link path once
    /// a new board-sim is behind it, and the first commands the new board sees are the safe state.
    @Test func aKilledBoardIsReportedReopenedAndGetsTheSafeStateFirst() throws {
        let dir = try TemporaryDirectory()
        let link = dir.path + "/board"
        let first = try BoardSimProcess(["--link", link])
        let events = EventLog<BoardEvent>()
        var options = patient
        options.reconnectInterval = .milliseconds(100)
        let board = try BoardConnection(spec: .serial(path: link, baud: 115200), profile: .kit, options: options) { events.append($0) }
        defer { board.close() }
        var value: UInt8 = 1
        func drive() { board.setDesired([0x22: value, 0x23: value &+ 1]); value &+= 1 }
        #expect(eventually { drive(); usleep(2_000); return first.commands.count > 10 })

        kill(first.child.pid, SIGKILL)
        #expect(eventually { drive(); usleep(2_000); return events.all.contains { if case .disconnected = $0 { true } else { false } } })
        #expect(!board.snapshot.isConnected)
        let reason = events.all.compactMap { e -> String? in if case .disconnected(_, let r) = e { r } else { nil } }.first ?? ""
        #expect(["hang-up", "end of file", "input/output error"].contains { reason.contains($0) }, "\(reason)")
        #expect(board.snapshot.lastError?.hasPrefix("serial:\(link): ") == true)
        for _ in 0..<20 { drive(); usleep(2_000) }   // desired values set during the outage

        let second = try BoardSimProcess(["--link", link])
        #expect(eventually { events.all.contains(.reconnected(device: "serial:\(link)")) })
        #expect(board.snapshot.isConnected)
        #expect(eventually { second.commands.count >= 4 })
        #expect(beginsWithSafeState(second.commands), "\(second.commands.prefix(6))")
        let latest = value &- 1
        #expect(second.waitForMap { $0[0x22] == latest && $0[0x23] == latest &+ 1 }, "the desired values follow the safe state")
        #expect(events.all.first == .connected(device: "serial:\(link)"))
    }

    @Test func boardSimExitsOnSIGTERMAndRemovesItsLink() throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--link", dir.path + "/board"])
        #expect(FileManager.default.fileExists(atPath: sim.path))
        sim.child.signal(SIGTERM)
        #expect(sim.child.wait(timeout: .seconds(5)) == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: sim.path)) == nil)
    }
}

/// The built binary's board commands that need no board.
@Suite struct BoardCommandLineTests {
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd"), "this machine has sound devices"))
    func probingAMIDIBoardWithoutSoundDevicesFailsWithOneLine() throws {
        let start = ContinuousClock.now
        let p = try ChildProcess(analogRemote: ["boards", "--probe", "midi:hw:0,0,0"])
        #expect(p.wait(timeout: .seconds(10)) == 3)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(p.eventuallyOutput { _, err in err.hasSuffix("\n") })
        let lines = p.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("analog-remote: midi:hw:0,0,0: no ALSA sound devices on this machine") == true, "\(p.stderr)")
        #expect(p.stdout.isEmpty)
    }

    @Test func probingAMissingSerialBoardNamesTheDevice() throws {
        let p = try ChildProcess(analogRemote: ["boards", "--probe", "serial:/dev/ttyACM-none"])
        #expect(p.wait(timeout: .seconds(10)) == 3)
        #expect(p.eventuallyOutput { _, err in err.hasSuffix("\n") })
        #expect(p.stderr == "analog-remote: serial:/dev/ttyACM-none: no such device (is the board plugged in? `analog-remote boards` lists candidates)\n")
    }

    @Test func aBadSpecIsAUsageError() throws {
        let p = try ChildProcess(analogRemote: ["boards", "--probe", "usb0"])
        #expect(p.wait(timeout: .seconds(10)) == 64)
        #expect(p.eventuallyOutput { _, err in err.hasSuffix("\n") })
        #expect(p.stderr.hasPrefix("analog-remote: bad board spec \"usb0\": expected sim[:stock|:motors], serial:"))
    }

    @Test(arguments: [("sim", "sim: profile motors · firmware product 1 version 1 · memory map 36 bytes (0x00–0x23), motors at 0x22/0x23\n"),
                      ("sim:stock", "sim:stock: profile stock · firmware product 1 version 1 · memory map 34 bytes (0x00–0x21), no motor bytes\n")])
    func probingTheSimulatedBoardSaysWhatItIs(spec: String, line: String) throws {
        let p = try ChildProcess(analogRemote: ["boards", "--probe", spec])
        #expect(p.wait(timeout: .seconds(10)) == 0)
        #expect(p.eventuallyOutput { out, _ in out.hasSuffix("\n") })
        #expect(p.stdout == line)
    }

    /// `boards --probe` against board-sim over a pty: one bounded read, decoded.
    @Test(arguments: [("stock", "profile stock · firmware product 1 version 1 · memory map 34 bytes (0x00–0x21), no motor bytes"),
                      ("motors", "profile motors · firmware product 1 version 1 · memory map 36 bytes (0x00–0x23), motors at 0x22/0x23")])
    func probingBoardSimSaysWhichFirmwareItRuns(firmware: String, text: String) throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--firmware", firmware, "--link", dir.path + "/board"])
        let p = try ChildProcess(analogRemote: ["boards", "--probe", "serial:\(sim.path)"])
        #expect(p.wait(timeout: .seconds(10)) == 0)
        #expect(p.eventuallyOutput { out, _ in out.hasSuffix("\n") })
        #expect(p.stdout == "serial:\(sim.path): \(text)\n")
        #expect(eventually { sim.commands == ["R 00 55"] })
    }

    @Test func listingSaysSoWhenThereAreNoBoards() throws {
        let dev = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        let hasSerial = dev.contains { $0.hasPrefix("ttyACM") || $0.hasPrefix("ttyUSB") }
        let hasSound = dev.contains("snd")
        let p = try ChildProcess(analogRemote: ["boards"])
        #expect(p.wait(timeout: .seconds(10)) == 0)
        #expect(p.eventuallyOutput { out, _ in out.hasSuffix("\n") })
        if !hasSerial && !hasSound {
            #expect(p.stdout == "no boards found\n")
        } else if hasSerial {
            #expect(p.stdout.contains("serial:/dev/tty"))
        }
    }

    @Test func theHelpDocumentsTheTraceFormat() throws {
        let p = try ChildProcess(analogRemote: ["help", "board-sim"])
        #expect(p.wait(timeout: .seconds(10)) == 0)
        #expect(p.eventuallyOutput { out, _ in out.contains("-h, --help") })
        for s in ["\"cmd LINE\"", "\"map HEX\"", "(68 digits for the stock firmware's 34 bytes, 72 for motors)",
                  "line 1: the path to connect to"] {
            #expect(p.stdout.contains(s), "help lacks \(s)")
        }
    }
}
