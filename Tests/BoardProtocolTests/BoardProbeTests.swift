import BoardProtocol
import Testing

@Suite struct BoardIdentityTests {
    @Test func theProbeIsOneBoundedRead() {
        #expect(BoardIdentity.probe == .read(address: 0, count: 85))
        #expect(BoardIdentity.probe.text == "R 00 55")
        // 3 characters a byte: the firmware's 256-byte reply buffer holds 85 and the NUL.
        #expect(BoardIdentity.probeLength * 3 < 256)
    }

    @Test(arguments: [(34, BoardProfileKind.stock), (35, .stock), (36, .motors), (85, .motors)])
    func theMapSizeTellsTheFirmware(size: Int, kind: BoardProfileKind) throws {
        let map = [0x01, 0x01] + [UInt8](repeating: 0xFF, count: size - 2)
        let identity = try #require(BoardIdentity(probeReply: .values(map)))
        #expect(identity.mapSize == size && identity.productID == 1 && identity.version == 1)
        #expect(identity.profile == kind)
    }

    @Test func aSmallMapOrNoMapIsNoKnownFirmware() {
        #expect(BoardIdentity(productID: 1, version: 1, mapSize: 20).profile == nil)
        #expect(BoardIdentity(probeReply: .values([1])) == nil)
        #expect(BoardIdentity(probeReply: .undefinedCommand) == nil)
        #expect(BoardIdentity(probeReply: .done) == nil)
    }

    @Test func itSaysWhatTheBoardIsInOneLine() {
        #expect(BoardIdentity(productID: 1, version: 1, mapSize: 34).description
                == "profile stock · firmware product 1 version 1 · memory map 34 bytes (0x00–0x21), no motor bytes")
        #expect(BoardIdentity(productID: 1, version: 2, mapSize: 85).summary == "motors firmware 1.2, 85+-byte map")
    }
}

@Suite struct StockProfileTests {
    @Test func theStockProfileHasNoMotorsAndItsSafeStateStaysInsideItsMap() {
        let stock = MemoryMapProfile.stock
        #expect(stock.size == 34 && !stock.hasMotors && stock.problem == nil)
        #expect(stock.safeState == [0x09: 0, 0x0A: 0, 0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0])
        #expect(stock.safeState.keys.allSatisfy { $0 <= 0x21 })
        #expect(stock.motors(left: 5, right: 5).isEmpty)
    }
}

/// The board link's writer in its verifying mode: probe first, then the safe state, then the
/// desired values, each address's first write read back at once.
@Suite struct VerifyingWriterTests {
    /// A board as the firmware is: `size` bytes, writes past it dropped, reads truncated; and
    /// writes to `drops` acknowledged and dropped (a faulty firmware).
    struct Board {
        var map: [UInt8]
        var drops: Set<UInt8> = []
        init(size: Int) { map = [1, 1] + [UInt8](repeating: 0xFF, count: size - 2) }

        mutating func answer(_ command: BoardCommand) -> BoardResponse {
            switch command {
            case let .write(address, bytes):
                for (i, b) in bytes.enumerated() where Int(address) + i < map.count && !drops.contains(address + UInt8(i)) {
                    map[Int(address) + i] = b
                }
                return .done
            case let .read(address, count):
                return .values(Array(map[min(Int(address), map.count)..<min(Int(address) + Int(count), map.count)]))
            default:
                return .undefinedCommand
            }
        }
    }

    @Test func theProbeGoesFirstAndNothingElseUntilTheOwnerDecides() {
        var w = MemoryMapWriter(profile: .stock, verifies: true)
        w.setDesired([0x0F: 9])
        w.connected()
        #expect(w.nextCommand() == BoardIdentity.probe)
        #expect(w.nextCommand() == nil)
        #expect(w.completed(.values([1, 1] + [UInt8](repeating: 0, count: 32))) == .identified(BoardIdentity(productID: 1, version: 1, mapSize: 34)))
        #expect(w.nextCommand() == nil, "nothing is written before identified(profile:) or refuse(_:)")
        #expect(w.isWritingSafeState)
    }

    @Test func onAStockBoardTheSafeStateThenTheDriveEachFirstWriteReadBackAndNothingPast0x21() {
        var board = Board(size: 34)
        var w = MemoryMapWriter(profile: .stock, verifies: true)
        w.setDesired([0x0F: 0x80, 0x10: 0x80, 0x12: 0x40, 0x13: 0x40, 0x14: 0x01, 0x22: 0xC0])
        w.connected()
        var sent: [String] = []
        while let c = w.nextCommand() {
            sent.append(c.text)
            let finding = w.completed(board.answer(c))
            if case .identified = finding { w.identified(profile: .stock) } else { #expect(finding == nil) }
        }
        #expect(sent == ["R 00 55",
                         "W 09 0000", "R 09 02", "W 0f 0000", "R 0f 02", "W 12 000000", "R 12 03",
                         "W 0f 8080", "W 12 404001"])
        #expect(w.isSettled)
        #expect(!sent.contains { $0.hasPrefix("W 22") }, "0x22 is not on a stock board")
    }

    @Test func aDroppedWriteIsFoundByTheVeryNextCommand() throws {
        var board = Board(size: 36)
        board.drops = [0x23]
        var w = MemoryMapWriter(profile: .motors, verifies: true)
        w.connected()
        var findings: [MemoryMapWriter.Finding] = []
        var sent: [String] = []
        while let c = w.nextCommand() {
            sent.append(c.text)
            if let f = w.completed(board.answer(c)) {
                findings.append(f)
                if case .identified = f { w.identified(profile: .motors) } else { w.refuse("dropped") }
            }
        }
        // The safe state's run at 0x22 already writes 0x23 = 0, which the erased board (0xff) drops.
        let at = try #require(sent.firstIndex(of: "W 22 0000"))
        #expect(sent[at + 1] == "R 22 02", "the read-back follows the write at once")
        #expect(findings.last == .dropped(address: 0x23, wrote: 0, read: 0xFF))
        #expect(Array(sent.dropFirst(at + 2)) == ["W 23 00"], "after the refusal only the safe byte it lacks, once: \(sent)")
        #expect(w.refusal == "dropped" && w.isSettled)
    }

    @Test func aRefusedBoardGetsOnlyItsOwnSafeStateThenNothing() {
        var board = Board(size: 34)
        var w = MemoryMapWriter(profile: .motors, verifies: true)
        w.setDesired([0x22: 0xC0, 0x23: 0x40, 0x0F: 1])
        w.connected()
        var sent: [String] = []
        while let c = w.nextCommand() {
            sent.append(c.text)
            if case .identified = w.completed(board.answer(c)) { w.refuse("needs 0x22", profile: .stock) }
        }
        #expect(sent == ["R 00 55", "W 09 0000", "W 0f 0000", "W 12 000000"])
        #expect(w.safeState == MemoryMapProfile.stock.safeState)
    }

    @Test func anUnknownBoardGetsNothingAtAll() {
        var w = MemoryMapWriter(profile: .motors, verifies: true)
        w.connected()
        #expect(w.nextCommand() == BoardIdentity.probe)
        #expect(w.completed(.undefinedCommand) == .unknownBoard(.undefinedCommand))
        w.refuse("not a kit board")
        #expect(w.nextCommand() == nil)
        #expect(w.safeState.isEmpty)
    }

    @Test func aFailedProbeOrReadBackIsAskedAgain() {
        var w = MemoryMapWriter(profile: .stock, verifies: true)
        w.connected()
        #expect(w.nextCommand() == BoardIdentity.probe)
        w.failed()
        #expect(w.nextCommand() == BoardIdentity.probe)
        _ = w.completed(.values([1, 1] + [UInt8](repeating: 0, count: 32)))
        w.identified(profile: .stock)
        #expect(w.nextCommand() == .write(address: 0x09, bytes: [0, 0]))
        w.succeeded()
        #expect(w.nextCommand() == .read(address: 0x09, count: 2))
        w.failed()
        #expect(w.nextCommand() == .read(address: 0x09, count: 2))
    }

    @Test func everyConnectProbesAndReadsBackAgain() {
        var board = Board(size: 34)
        var w = MemoryMapWriter(profile: .stock, verifies: true)
        for _ in 0..<2 {
            w.connected()
            var sent: [String] = []
            while let c = w.nextCommand() {
                sent.append(c.text)
                if case .identified = w.completed(board.answer(c)) { w.identified(profile: .stock) }
            }
            #expect(sent.first == "R 00 55" && sent.contains("R 09 02"))
        }
    }
}
