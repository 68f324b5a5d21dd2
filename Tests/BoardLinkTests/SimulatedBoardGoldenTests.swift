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
