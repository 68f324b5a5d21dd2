import BoardProtocol
import PropertyBased
import TestSupport
import Testing

@Suite struct BoardCommandFormatting {
    @Test(arguments: [
        (BoardCommand.write(address: 0x0F, bytes: [0x64, 0xC8]), "W 0f 64c8\n"),
        (.write(address: 0x22, bytes: [0xC0, 0x40]), "W 22 c040\n"),
        (.read(address: 0x0B, count: 4), "R 0b 04\n"),
        (.read(address: 0x00, count: 0x22), "R 00 22\n"),
        (.eepromWrite(address: 0x22, bytes: [0x90, 0x0F]), "P 22 900f\n"),
        (.eepromRead(address: 0xFF, count: 1), "G ff 01\n"),
        (.flash, "F\n"),
    ])
    func linesAreUppercaseLetterLowercaseHexLFOnly(command: BoardCommand, line: String) {
        #expect(command.line == line.bytes)
        #expect(command.text + "\n" == line)
        #expect(!command.line.contains(0x0D), "never CR: CRLF is two lines to the firmware")
    }

    @Test func theLongestWriteFitsTheFirmwareLine() {
        let longest = BoardCommand.write(address: 0, bytes: [UInt8](repeating: 0xAB, count: BoardCommand.maximumDataBytes))
        #expect(longest.line.count == 256 && longest.fitsOneLine)
        let tooLong = BoardCommand.write(address: 0, bytes: [UInt8](repeating: 0xAB, count: BoardCommand.maximumDataBytes + 1))
        #expect(!tooLong.fitsOneLine)
    }

    /// Whatever we format, the firmware's fixed-column reading and our strict parser both read
    /// back as the same command.
    @Test func formattedCommandsReadBackUnderBothParsers() async {
        let commands = Gen<Int>.int(in: 0...4).map { $0 }
        await propertyCheck(count: 500, input: commands, Gen<UInt8>.uint8(), Gen<UInt8>.uint8().array(of: 1...BoardCommand.maximumDataBytes)) { kind, address, data in
            let command: BoardCommand = switch kind {
            case 0: .write(address: address, bytes: data)
            case 1: .read(address: address, count: data[0])
            case 2: .eepromWrite(address: address, bytes: data)
            case 3: .eepromRead(address: address, count: data[0])
            default: .flash
            }
            #expect(BoardCommand.interpret(firmwareLine: command.line) == command)
            #expect(BoardCommand(strict: command.line) == command)
        }
    }
}

@Suite struct FirmwareLineReading {
    func interpret(_ s: String) -> BoardCommand? { BoardCommand.interpret(firmwareLine: s.bytes) }

    @Test func lettersInEitherCase() {
        #expect(interpret("w 0f 64c8\n") == .write(address: 0x0F, bytes: [0x64, 0xC8]))
        #expect(interpret("r 0F 02\n") == .read(address: 0x0F, count: 2))
        #expect(interpret("p 00 01\n") == .eepromWrite(address: 0, bytes: [1]))
        #expect(interpret("g 00 01\n") == .eepromRead(address: 0, count: 1))
        #expect(interpret("f\n") == .flash)
    }

    @Test func anUnknownLetterOrAnEmptyLineIsUndefined() {
        #expect(interpret("X 00 00\n") == nil)
        #expect(interpret("\n") == nil)
        #expect(interpret("\r") == nil)
        #expect(interpret(" W 00 00\n") == nil)
    }

    @Test func anOddDigitPairsWithTheTerminator() {
        #expect(interpret("W 0f 6\n") == .write(address: 0x0F, bytes: [0x60]))
    }

    @Test func nonHexReadsAsZeroAndColumnsOneAndFourAreNotChecked() {
        #expect(interpret("W 10 zA\n") == .write(address: 0x10, bytes: [0x0A]))
        #expect(interpret("Wx0fy64\n") == .write(address: 0x0F, bytes: [0x64]))
        #expect(interpret("R zz 02\n") == .read(address: 0, count: 2))
    }

    @Test func missingColumnsReadAsNul() {
        #expect(interpret("R\n") == .read(address: 0, count: 0))
        #expect(interpret("W 0f\n") == .write(address: 0x0F, bytes: []))
        #expect(interpret("F junk\n") == .flash)
    }

    @Test func dataStopsAtAnyTerminator() {
        #expect(interpret("W 00 0102\r") == .write(address: 0, bytes: [1, 2]))
        #expect(interpret("W 00 01\u{0}02\n") == .write(address: 0, bytes: [1]))
    }

    @Test func strictParsingRefusesWhatWeNeverSend() {
        #expect(BoardCommand(strict: "W 0f 6\n".bytes) == nil)
        #expect(BoardCommand(strict: "W 0f zz\n".bytes) == nil)
        #expect(BoardCommand(strict: "R 0f 0102\n".bytes) == nil)
        #expect(BoardCommand(strict: "F x\n".bytes) == nil)
        #expect(BoardCommand(strict: "W 22 c040".bytes) == .write(address: 0x22, bytes: [0xC0, 0x40]))
    }
}
