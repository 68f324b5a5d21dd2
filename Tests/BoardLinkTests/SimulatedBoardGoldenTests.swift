import BoardFirmware
import BoardProtocol
import BoardSimulator
import MIDIFraming
import TestSupport
import Testing

/// The simulator against the golden transcripts (research §1.5 and §3.4, vectors/board-transcripts.json).
@Suite struct SimulatedBoardGoldenTests {
    let transcripts: BoardTranscripts
    init() throws { transcripts = try BoardTranscripts.load() }

    enum Feed: CaseIterable { case whole, byteByByte, chunks }

    func feed(_ board: inout SimulatedBoard, _ bytes: [UInt8], _ how: Feed, seed: UInt64) {
        switch how {
        case .whole: board.receive(bytes)
        case .byteByByte: for b in bytes { board.receive([b]) }
        case .chunks: for c in randomChunks(bytes, seed: seed) { board.receive(c) }
        }
    }

    @Test(arguments: Feed.allCases)
    func textFramingAnswersByteForByte(how: Feed) {
        var board = SimulatedBoard()
        for (i, step) in transcripts.text.enumerated() {
            feed(&board, step.send.bytes, how, seed: UInt64(i))
            let out = board.takeOutput()
            #expect(out == step.receive.bytes, "\(step.name): got \(ByteText.escaped(out))")
        }
    }

    /// The stock firmware's transcripts: a new board (erased EEPROM), 34 bytes, no motors.
    @Test(arguments: Feed.allCases)
    func theStockFirmwareAnswersByteForByte(how: Feed) throws {
        var board = SimulatedBoard(profile: .stock, eeprom: SimulatedBoard.erasedEEPROM)
        _ = board.takeOutput()
        for (i, step) in transcripts.stock.enumerated() {
            feed(&board, step.send.bytes, how, seed: UInt64(i))
            let out = board.takeOutput()
            #expect(out == step.receive.bytes, "\(step.name): got \(ByteText.escaped(out))")
        }
        let probe = try #require(transcripts.stock.first?.replies.first?.values)
        #expect(BoardIdentity(probeReply: .values(BoardTranscripts.bytes(hex: probe))) == BoardIdentity(productID: 1, version: 1, mapSize: 34))
    }

    @Test func theTranscriptLeavesTheMapAsTheStepsSay() {
        var board = SimulatedBoard()
        for step in transcripts.text { board.receive(step.send.bytes) }
        #expect(board.value(at: 0x0F) == 0x60)   // "W 0f 6"
        #expect(board.value(at: 0x10) == 0x0A)   // "W 10 zA"
        #expect(board.value(at: 0x23) == 0x7F)   // "W 23 7f01": 0x24 dropped
        #expect(board.memoryMap.count == 36)
        #expect(Array(board.eeprom[0x0F...0x10]) == [0x64, 0xC8], "F stored the map as it was then")
    }

    @Test(arguments: Feed.allCases)
    func midiFramingAnswersByteForByte(how: Feed) {
        var board = SimulatedBoard(framing: .midi)
        for (i, step) in transcripts.midi.session.enumerated() {
            feed(&board, BoardTranscripts.bytes(hex: step.send), how, seed: UInt64(i))
            let out = board.takeOutput()
            #expect(out == BoardTranscripts.bytes(hex: step.receive), "\(step.name)")
            var notes = NotePairDecoder()
            #expect(notes.decode(out) == step.text.bytes, "\(step.name)")
        }
    }

    /// The firmware's `recv_midi` on the kernel's packets: the SysEx table of §3.4.
    @Test func sysExBodiesBecomeTheLinesOfTheTable() {
        for c in transcripts.midi.sysex {
            var board = SimulatedBoard(framing: .midi)
            _ = board.takeOutput()
            let lines = board.receive(BoardTranscripts.bytes(hex: c.rawmidi))
            if let line = c.line {
                #expect(lines.map(\.bytes) == [BoardTranscripts.bytes(hex: line)], "\(c.body.debugDescription)")
            } else {
                #expect(lines.isEmpty, "\(c.body.debugDescription) must never complete")
                #expect(!board.hasOutput)
            }
        }
    }

    /// What the simulator says, the host's decoder reads back: every command the host can send,
    /// through both framings.
    @Test func theClientDecodesWhatTheSimulatorSays() throws {
        let commands: [BoardCommand] = [
            .write(address: 0x22, bytes: [0x81, 0x7F]), .read(address: 0x22, count: 2), .read(address: 0, count: 36),
            .eepromWrite(address: 0x30, bytes: [1, 2, 3]), .eepromRead(address: 0x30, count: 3), .flash,
            .read(address: 0x40, count: 2),
        ]
        let expected: [BoardResponse] = [
            .done, .values([0x81, 0x7F]), nil, .done, .values([1, 2, 3]), .flashed, .values([]),
        ].map { $0 ?? .done }
        for framing in [SimulatedBoard.Framing.text, .midi] {
            var board = SimulatedBoard(framing: framing)
            var session = BoardSession()
            var notes = NotePairDecoder()
            _ = session.receive(notes.decode(board.takeOutput()), now: .now)
            for (command, want) in zip(commands, expected) {
                let line = session.start(command, now: .now)
                board.receive(framing == .text ? line : try SysEx.frame(line))
                let text = framing == .text ? board.takeOutput() : notes.decode(board.takeOutput())
                let events = session.receive(text, now: .now)
                guard case .completed(let c, let response)? = events.first, events.count == 1 else {
                    Issue.record("\(framing) \(command): \(events)")
                    continue
                }
                #expect(c == command)
                if command == .read(address: 0, count: 36) {
                    guard case .values(let map) = response else { Issue.record("\(response)"); continue }
                    #expect(map == board.memoryMap)
                } else {
                    #expect(response == want, "\(framing) \(command)")
                }
            }
        }
    }

    @Test func bootLoadsTheMapFromEEPROMAndSetsTheFixedBytes() {
        var rom = [UInt8](repeating: 0x55, count: 1024)
        rom[0x22] = 0x40
        let board = SimulatedBoard(eeprom: rom)
        #expect(Array(board.memoryMap[0...4]) == [1, 1, 0, 0, 36], "product, version, mode, program counter = map size")
        #expect(board.motors?.left == 0x40, "a flashed map starts the motors at boot: why the host writes the safe state first")
        #expect(board.value(at: 0x0B) == 0, "sensors read the inputs, not EEPROM")
        #expect(board.value(at: 0x0F) == 0x55)
    }

    @Test func writesToSensorAddressesAreOverwrittenAsByTheFirmwareLoop() {
        var board = SimulatedBoard()
        board.inputs.sensors = (10, 20, 30, 40)
        board.receive("W 0b ffff\n".bytes)
        _ = board.takeOutput()
        board.receive("R 0b 04\n".bytes)
        #expect(board.takeOutput() == "R 0b 04\n\r\n0a 14 1e 28 \r\n>".bytes)
    }
}

/// The stock firmware as board-sim runs it by default: the facts of the kit's published sketch.
@Suite struct StockFirmwareSimulationTests {
    func stockBoard() -> SimulatedBoard {
        var board = SimulatedBoard(profile: .stock, eeprom: SimulatedBoard.erasedEEPROM)
        _ = board.takeOutput()
        return board
    }

    func read(_ board: inout SimulatedBoard, _ line: String) -> [UInt8] {
        board.receive(Array(line.utf8))
        let out = board.takeOutput()
        var session = BoardReplyDecoder()
        session.expect(Array(line.utf8))
        session.append(out)
        guard let reply = try? session.decode(), case .values(let v) = reply.response else { return [] }
        return v
    }

    @Test func aNewBoardHas34BytesAndBootsFromAnErasedEEPROM() {
        var board = stockBoard()
        let map = read(&board, "R 00 55\n")
        #expect(map.count == 34, "the read stops at the end of the map")
        #expect(Array(map[0...4]) == [1, 1, 0, 0, 34], "product 1, version 1, stopped, the program counter at the map size")
        #expect(map[0x0F] == 0xFF && map[0x10] == 0xFF && map[0x09] == 0xFF && map[0x12] == 0xFF, "erased: 0xff until written")
    }

    @Test func writesPastTheMapAreDroppedWithANormalPrompt() {
        var board = stockBoard()
        board.receive(Array("W 21 0102\n".utf8))
        #expect(board.takeOutput() == Array("W 21 0102\n\r\n\r\n>".utf8))
        #expect(board.memoryMap.count == 34 && board.value(at: 0x21) == 1 && board.value(at: 0x22) == nil)
        #expect(read(&board, "R 22 02\n").isEmpty)
    }

    @Test func theLoopDrawsRandomBytesCountsTheTimerAndReadsTheSwitchAgain() {
        var board = stockBoard()
        var randoms: Set<UInt8> = []
        for ms in stride(from: 0, to: 2_500, by: 100) {
            board.loop(at: .milliseconds(ms))
            randoms.insert(board.value(at: 0x05) ?? 0)
        }
        #expect(randoms.count > 5, "random changes every loop")
        #expect(randoms.allSatisfy { $0 < 255 }, "random(255) is 0…254")
        #expect(board.value(at: 0x06) == 2, "whole seconds")
        board.receive(Array("W 11 01\n".utf8))
        #expect(board.value(at: 0x11) == 0, "the switch is read again: a write does not stick")
        board.inputs.switchPressed = true
        board.loop(at: .seconds(3))
        #expect(board.value(at: 0x11) == 1)
    }

    @Test func theBuzzerSoundsOnlyWhenAWriteTouches0x09Or0x0a() {
        var board = stockBoard()
        #expect(!board.isBuzzing, "0xff at boot, but nothing wrote the buzzer")
        board.receive(Array("W 09 167d\n".utf8))
        #expect(board.isBuzzing && board.buzzer.note == 22 && board.buzzer.duration == .milliseconds(2000))
        board.receive(Array("W 0f 80\n".utf8))
        #expect(board.buzzer.writes == 1, "an LED write does not touch the buzzer")
        board.loop(at: .milliseconds(2001))
        #expect(!board.isBuzzing, "the tone ends after its time")
        board.receive(Array("W 0a 00\n".utf8))
        #expect(board.isBuzzing && board.buzzer.duration == .zero, "time 0: until the next write")
        board.receive(Array("W 09 00\n".utf8))
        #expect(!board.isBuzzing && board.buzzer.writes == 3)
    }

    @Test func aFaultyBoardDropsTheWritesItIsToldTo() {
        var board = stockBoard()
        board.dropWrites = [0x10]
        board.receive(Array("W 0f 1122\n".utf8))
        #expect(board.value(at: 0x0F) == 0x11 && board.value(at: 0x10) == 0xFF)
    }
}
