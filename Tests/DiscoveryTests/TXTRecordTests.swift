import Discovery
import PropertyBased
import Testing

@Suite struct TXTRecordTests {
    @Test func encodesLengthPrefixedKeyValueStrings() throws {
        var txt = TXTRecord()
        try txt.set("v", "1")
        try txt.set("flag", bytes: nil)
        try txt.set("empty", "")
        #expect(txt.encoded == [3] + Array("v=1".utf8) + [4] + Array("flag".utf8) + [6] + Array("empty=".utf8))
    }

    @Test func emptyRecordIsOneZeroByte() {
        #expect(TXTRecord().encoded == [0])
        #expect(TXTRecord.decode([0])?.entries.isEmpty == true)
        #expect(TXTRecord.decode([UInt8]())?.entries.isEmpty == true)
    }

    @Test func decodesValuesBareKeysAndEmptyValues() throws {
        let bytes: [UInt8] = [3] + Array("v=1".utf8) + [4] + Array("flag".utf8) + [6] + Array("empty=".utf8)
        let txt = try #require(TXTRecord.decode(bytes))
        #expect(txt.text("v") == "1")
        #expect(txt["flag"] == .some(nil))
        #expect(txt.text("flag") == nil)
        #expect(txt["empty"] == .some([]))
        #expect(txt["absent"] == nil)
    }

    @Test func keysAreCaseInsensitiveAndTheFirstOccurrenceWins() throws {
        let bytes: [UInt8] = [3] + Array("V=1".utf8) + [3] + Array("v=2".utf8)
        let txt = try #require(TXTRecord.decode(bytes))
        #expect(txt.text("v") == "1")
        #expect(txt.entries.count == 1)
        var built = TXTRecord()
        try built.set("Rate", "50")
        try built.set("rate", "60")
        #expect(built.entries.count == 1 && built.text("RATE") == "60")
    }

    @Test func valuesMayHoldAnyBytesIncludingEqualsAndUTF8() throws {
        var txt = TXTRecord()
        try txt.set("session", "3年B組 チーム2")
        try txt.set("x", bytes: [0, 0xFF, UInt8(ascii: "=")])
        let back = try #require(TXTRecord.decode(txt.encoded))
        #expect(back.text("session") == "3年B組 チーム2")
        #expect(back["x"] == .some([0, 0xFF, UInt8(ascii: "=")]))
    }

    @Test func overrunningLengthIsMalformed() {
        #expect(TXTRecord.decode([5, 0x61, 0x3D, 0x62]) == nil)
        #expect(TXTRecord.decode([3] + Array("v=1".utf8) + [200]) == nil)
    }

    @Test func stringsWithoutAUsableKeyAreSkipped() throws {
        let bytes: [UInt8] = [0] + [2] + Array("=x".utf8) + [3, 0x01, 0x3D, 0x31] + [3] + Array("v=1".utf8)
        let txt = try #require(TXTRecord.decode(bytes))
        #expect(txt.entries == [TXTRecord.Entry(key: "v", value: Array("1".utf8))])
    }

    @Test func invalidKeysAndOverlongStringsAreRefused() {
        var txt = TXTRecord()
        #expect(throws: TXTRecordError.invalidKey("")) { try txt.set("", "x") }
        #expect(throws: TXTRecordError.invalidKey("a=b")) { try txt.set("a=b", "x") }
        #expect(throws: TXTRecordError.invalidKey("ключ")) { try txt.set("ключ", "x") }
        #expect(throws: TXTRecordError.tooLong(key: "k", byteCount: 256)) {
            try txt.set("k", String(repeating: "x", count: 254))
        }
        #expect((try? txt.set("k", String(repeating: "x", count: 253))) != nil)
    }

    /// Garbage: any bytes decode to a record or nil, never trap; a record that decodes
    /// re-encodes to bytes that decode to the same record.
    @Test func randomBytesNeverTrapAndReencodeStably() async {
        await propertyCheck(count: 3000, input: Gen<UInt8>.value().array(of: 0...80)) { bytes in
            guard let txt = TXTRecord.decode(bytes) else { return }
            #expect(TXTRecord.decode(txt.encoded) == txt)
        }
    }

    /// Random well-formed records (random keys and values) round-trip exactly.
    @Test func builtRecordsRoundTrip() async {
        let keyByte = Gen<UInt8>.value(in: 0x20...0x7E).filter { $0 != UInt8(ascii: "=") }
        let key = keyByte.array(of: 1...9).map { String(decoding: $0, as: UTF8.self) }
        let value = Gen<UInt8>.value().array(of: 0...40)
        await propertyCheck(count: 1000, input: key.array(of: 0...6), value.array(of: 6...6)) { keys, values in
            var txt = TXTRecord()
            for (k, v) in zip(keys, values) { try txt.set(k, bytes: v) }
            #expect(TXTRecord.decode(txt.encoded) == txt)
        }
    }
}
