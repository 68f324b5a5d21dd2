import BoardFirmware
import BoardLink
import BoardProtocol
import Foundation
import TestSupport
import Testing

/// The sensor block: the settings text board-sim takes, the firmware's answer to `R 07 0b`, and
/// a link that reads it from board-sim while it writes.
@Suite struct SensorReadTests {
    @Test func theSettingsTextSetsTheInputsAndABadWordIsNamed() throws {
        let settings = try SensorSettings(parsing: "sensor1=10 sensor2=20 # a comment\nsensor3=30\tsensor4=255\nswitch=1 temperature=-3 humidity=45\n")
        let inputs = settings.applied(to: SimulatedBoard.Inputs())
        #expect(inputs.sensors == (10, 20, 30, 255) && inputs.switchPressed && inputs.temperature == 0xFD && inputs.humidity == 45)
        // A key left out keeps its value.
        let later = try SensorSettings(parsing: "sensor2=7").applied(to: inputs)
        #expect(later.sensors == (10, 7, 30, 255) && later.switchPressed)
        #expect(throws: SensorSettings.ParseError.self) { try SensorSettings(parsing: "sensor5=1") }
        #expect(throws: SensorSettings.ParseError.self) { try SensorSettings(parsing: "sensor1=256") }
        #expect(throws: SensorSettings.ParseError.self) { try SensorSettings(parsing: "switch=2") }
        #expect(throws: SensorSettings.ParseError.self) { try SensorSettings(parsing: "temperature=-129") }
        #expect(throws: SensorSettings.ParseError.self) { try SensorSettings(parsing: "humidity") }
        do {
            _ = try SensorSettings(parsing: "sensor1=12 light=3")
        } catch {
            #expect(error.description.hasPrefix("\"light=3\": unknown key"))
        }
    }

    /// The published firmware prints `"%02x "` for each byte of 0x07…0x11, then the prompt.
    @Test func theStockFirmwareAnswersTheSensorReadByteForByte() {
        var board = SimulatedBoard(profile: .stock, eeprom: SimulatedBoard.erasedEEPROM)
        _ = board.takeOutput()
        board.inputs = SensorSettings([.sensor1: 10, .sensor2: 20, .sensor3: 30, .sensor4: 255, .switch: 1, .temperature: -3, .humidity: 45])
            .applied(to: board.inputs)
        board.receive(Array("W 09 0000\nW 0f 0000\n".utf8))
        _ = board.takeOutput()
        board.receive(Array("R 07 0b\n".utf8))
        #expect(board.takeOutput() == Array("R 07 0b\n\r\nfd 2d 00 00 0a 14 1e ff 00 00 01 \r\n>".utf8))
        var decoder = BoardReplyDecoder()
        decoder.expect(Array("R 07 0b\n".utf8))
        decoder.append(Array("R 07 0b\n\r\nfd 2d 00 00 0a 14 1e ff 00 00 01 \r\n>".utf8))
        let reply = try? decoder.decode()
        #expect(reply?.response == .values([0xFD, 0x2D, 0, 0, 0x0A, 0x14, 0x1E, 0xFF, 0, 0, 1]))
        #expect(reply.flatMap { if case .values(let v) = $0.response { SensorBlock(readReply: v) } else { nil } }
                == SensorBlock(sensors: [10, 20, 30, 255], switchValue: 1, temperature: -3, humidity: 45))
    }

    /// board-sim with `--sensors FILE`: the link reads what the test writes there, at 10 Hz,
    /// while it writes the owner's changes as fast as they come. board-sim counts as an overlap
    /// any line sent before the previous prompt: one command on the wire at a time, no `R`
    /// overlaps a `W` (the link's default; `writeBehindRead` is off).
    @Test(arguments: [BoardProfileKind.stock, .motors])
    func theLinkReadsWhatBoardSimSensesWithoutOverlappingItsWrites(firmware: BoardProfileKind) throws {
        let dir = try TemporaryDirectory()
        let file = dir.path + "/sensors"
        func setSensors(_ text: String) throws {
            try text.write(toFile: file + ".tmp", atomically: false, encoding: .utf8)
            guard rename(file + ".tmp", file) == 0 else { throw TestFailure("rename failed") }
        }
        try setSensors("sensor1=10 sensor2=20 sensor3=30 sensor4=40 switch=0 temperature=21 humidity=45\n")
        let sim = try BoardSimProcess(["--firmware", firmware.rawValue, "--sensors", file])
        let blocks = EventLog<SensorBlock>()
        var options = BoardOptions()
        options.replyTimeout = .seconds(1)
        let link = try BoardConnection(spec: .serial(path: sim.path, baud: 115_200), profile: firmware.profile, options: options,
                                       onSensors: SensorSink { blocks.append($0) })
        defer { link.close() }
        let first = SensorBlock(sensors: [10, 20, 30, 40], switchValue: 0, temperature: 21, humidity: 45)
        #expect(eventually { link.snapshot.sensors == first }, "\(link.snapshot)")

        // Writes as fast as the link takes them, for a second, while the sensors change.
        let start = ContinuousClock.now
        var value: UInt8 = 0
        var changed = false
        while ContinuousClock.now - start < .seconds(1) {
            value &+= 1
            link.setDesired([0x0F: value])
            if !changed && ContinuousClock.now - start > .milliseconds(500) {
                try setSensors("sensor1=200 switch=1 temperature=-5\n")
                changed = true
            }
            usleep(1_000)
        }
        let second = SensorBlock(sensors: [200, 20, 30, 40], switchValue: 1, temperature: -5, humidity: 45)
        #expect(eventually { link.snapshot.sensors == second }, "\(link.snapshot)")
        #expect(blocks.all.contains(first) && blocks.all.last == second)
        #expect(sim.waitForMap { $0[0x0F] == value })
        let reads = sim.commands.filter { $0 == SensorBlock.read.text }.count
        print("sensor reads: \(reads) in about \(ContinuousClock.now - start), writes: \(sim.commands.filter { $0.hasPrefix("W 0f") }.count)")
        #expect(reads >= 5, "the link kept reading while it wrote: \(reads) reads")
        #expect(sim.overlaps == 0, "a command was sent before the previous prompt")
        #expect(link.snapshot.commandsFailed == 0, "\(link.snapshot.lastError ?? "")")
    }

    /// A kit link on a ``ManualBoard``, settled, with a sensor read on the wire whose reply the
    /// board holds (5 s reply timeout: it does not time out during a test).
    static func readOnTheWire(_ framing: SimulatedBoard.Framing, writeBehindRead: Bool) throws -> (ManualBoard, BoardConnection) {
        let board = try ManualBoard(framing: framing)
        var model = WriterModel()
        var options = OneHopTests.patient
        options.sensorRate = 50
        options.writeBehindRead = writeBehindRead
        let spec: BoardSpec = framing == .text ? .serial(path: board.path, baud: 115200) : .midiSerial(path: board.path, baud: 115200)
        let link: BoardConnection
        do {
            link = try BoardConnection(spec: spec, profile: .kit, options: options)
        } catch {
            board.close()
            throw error
        }
        do {
            for line in model.settle() { #expect(try board.exchange() == line) }
            // The writer has nothing left to send: the sensor read goes out.
            #expect(try board.receiveLine() == SensorBlock.read.text)
        } catch {
            link.close()
            board.close()
            throw error
        }
        #expect(eventually { link.snapshot.awaitingReply })
        return (board, link)
    }

    /// By default a change asked for while a sensor read is on the wire waits for the read's
    /// prompt: nothing reaches the board until it answers, then the `W` goes out.
    @Test(arguments: [SimulatedBoard.Framing.text, .midi])
    func byDefaultAChangeWaitsForTheReadsPrompt(framing: SimulatedBoard.Framing) throws {
        let (board, link) = try Self.readOnTheWire(framing, writeBehindRead: false)
        defer { link.close(); board.close() }
        let sent = link.snapshot.commandsSent
        link.setDesired([0x22: 0x10, 0x23: 0xF0])
        // The link's own word that it held the change: its count of commands sent (the line is
        // formatted and written in one step, so a W on the wire would have counted).
        #expect(link.snapshot.commandsSent == sent, "a W went out behind the read")
        try board.reply()
        #expect(try board.receiveLine(timeout: .seconds(2)) == "W 22 10f0", "the change after the read's prompt")
        try board.reply()
        #expect(eventually { link.snapshot.sensorReads == 1 && link.snapshot.confirmed[0x22] == 0x10 })
        #expect(link.snapshot.commandsFailed == 0, "\(link.snapshot.lastError ?? "")")
    }

    /// Under `writeBehindRead` (`receive --write-behind-read`) a change asked for while a sensor
    /// read is on the wire is not held for the read's prompt: its `W` reaches the board at once,
    /// behind the `R`, while the board still holds the read's reply; both replies then complete
    /// in order. (Without it the `W` waits for the prompt and, on the kit's firmware, for its
    /// next pass.) Over MIDI the two lines are two SysEx messages.
    @Test(arguments: [SimulatedBoard.Framing.text, .midi])
    func aChangeGoesOutBehindAReadOnTheWireWithoutWaitingForItsReply(framing: SimulatedBoard.Framing) throws {
        let (board, link) = try Self.readOnTheWire(framing, writeBehindRead: true)
        defer { link.close(); board.close() }
        let before = board.wire.count
        link.setDesired([0x22: 0x10, 0x23: 0xF0])
        let behind = try board.receiveLine(timeout: .seconds(2))
        #expect(behind == "W 22 10f0", "the W waited for the read's reply")
        guard behind != nil else { return }
        let w = BoardCommand.write(address: 0x22, bytes: [0x10, 0xF0]).line
        #expect(Array(board.wire[before...]) == (framing == .text ? w : [0xF0] + w + [0xF7]), "one line, one SysEx")
        let held = link.snapshot
        #expect(held.awaitingReply && held.confirmed[0x22] != 0x10 && held.sensorReads == 0, "\(held)")
        // A second change while both are on the wire waits: nothing goes behind a W.
        link.setDesired([0x0F: 0x33])
        #expect(link.snapshot.commandsSent == held.commandsSent)
        try board.reply()   // the firmware's pass answers both lines, in order
        #expect(eventually { link.snapshot.sensorReads == 1 && link.snapshot.confirmed[0x22] == 0x10 && link.snapshot.confirmed[0x23] == 0xF0 })
        #expect(try board.receiveLine() == "W 0f 33", "the next change follows the W's prompt")
        let lines = board.lines
        let readAt = lines.lastIndex(of: SensorBlock.read.text)
        #expect(readAt.map { Array(lines[$0...].prefix(3)) } == [SensorBlock.read.text, "W 22 10f0", "W 0f 33"], "\(lines)")
        #expect(link.snapshot.commandsFailed == 0, "\(link.snapshot.lastError ?? "")")
    }

    @Test func rateZeroNeverReads() throws {
        let sim = try BoardSimProcess(["--firmware", "stock"])
        var options = BoardOptions()
        options.sensorRate = 0
        let link = try BoardConnection(spec: .serial(path: sim.path, baud: 115_200), profile: .stock, options: options)
        defer { link.close() }
        #expect(link.waitUntilIdentified(timeout: .seconds(10))?.profile == .stock)
        link.setDesired([0x0F: 9])
        #expect(sim.waitForMap { $0[0x0F] == 9 })
        usleep(300_000)
        #expect(!sim.commands.contains(SensorBlock.read.text) && link.snapshot.sensors == nil && link.snapshot.sensorReads == 0)
    }
}
