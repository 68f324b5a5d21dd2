import Foundation
import MIDIFraming
import PropertyBased
import TestSupport
import Testing

/// Feeds `chunks` through one decoder; the messages in order.
func decodeChunks(_ chunks: [[UInt8]]) -> [MIDIMessage] {
    var decoder = MIDIStreamDecoder()
    var out: [MIDIMessage] = []
    for chunk in chunks { out += decoder.decode(chunk) }
    return out
}

/// Whole, byte by byte, and in random chunks (seeds 1…8): the same messages every way.
func everyFeeding(_ bytes: [UInt8]) -> [(String, [[UInt8]])] {
    var feeds: [(String, [[UInt8]])] = [("whole", [bytes]), ("byte by byte", bytes.map { [$0] })]
    for seed in 1...8 as ClosedRange<UInt64> { feeds.append(("chunks seed \(seed)", randomChunks(bytes, seed: seed, maxChunk: 5))) }
    return feeds
}

@Suite struct MIDIStreamGolden {
    let vectors: MIDIInputVectors
    init() throws { vectors = try MIDIInputVectors.load() }

    @Test func everyStreamDecodesAsTheFileSays() {
        #expect(vectors.streams.count >= 15)
        for stream in vectors.streams {
            let bytes = BoardTranscripts.bytes(hex: stream.bytes)
            for (how, chunks) in everyFeeding(bytes) {
                #expect(decodeChunks(chunks).map(\.description) == stream.messages, "\(stream.name) (\(how))")
            }
        }
    }

    /// The file is quoted by Protocol.md §9; every stream case must be there too.
    @Test func protocolMDListsEveryStreamCase() throws {
        let text = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for stream in vectors.streams {
            let listed = text.contains("`\(stream.bytes)`")
            #expect(listed, "Protocol.md lacks \(stream.bytes) (\(stream.name))")
        }
        for note in vectors.notes where [0, 21, 60, 69, 127].contains(note.number) {
            let listed = text.contains("\(note.number) = \(note.name)") || text.contains("\(note.name) = \(note.number)")
            #expect(listed, "Protocol.md lacks \(note.name) = \(note.number)")
        }
    }
}

@Suite struct MIDIStreamRules {
    @Test func aSysExOfAMegabyteIsSkippedAndTheDecoderStaysSmall() {
        var bytes: [UInt8] = [0x90, 0x3C, 0x40, 0xF0]
        bytes += (0..<1_000_000).map { UInt8($0 % 0x80) }
        bytes += [0xF7, 0x90, 0x3E, 0x40]
        var decoder = MIDIStreamDecoder()
        var got: [MIDIMessage] = []
        for b in bytes { if let m = decoder.decode(b) { got.append(m) } }
        #expect(got == [.noteOn(channel: 0, note: 60, velocity: 64), .noteOn(channel: 0, note: 62, velocity: 64)])
        #expect(decoder.sysExSkipped == 1)
        #expect(MemoryLayout<MIDIStreamDecoder>.size <= 32)
    }

    @Test func aSysExWithoutEndIsPartialUntilAStatusByteEndsIt() {
        var decoder = MIDIStreamDecoder()
        _ = decoder.decode([0xF0, 0x01, 0x02])
        #expect(decoder.isPartial)
        #expect(decoder.decode([0x80, 0x3C, 0x00]) == [.noteOff(channel: 0, note: 60, velocity: 0)])
        #expect(!decoder.isPartial)
    }

    @Test func endingAfterOneDataByteIsPartial() {
        var decoder = MIDIStreamDecoder()
        #expect(decoder.decode([0x90, 0x3C]).isEmpty)
        #expect(decoder.isPartial)
        #expect(decoder.decode(0x40) == .noteOn(channel: 0, note: 60, velocity: 64))
        #expect(!decoder.isPartial)
        #expect(decoder.decode(0x3E) == nil)          // running status: waiting for the velocity
        #expect(decoder.isPartial)
    }

    @Test func strayDataBytesAreCounted() {
        var decoder = MIDIStreamDecoder()
        _ = decoder.decode([0x01, 0x02, 0xF6, 0x03])
        #expect(decoder.strayDataBytes == 3)
    }

    /// Any sequence of well-formed messages, written with status bytes and real-time bytes
    /// sprinkled inside, decodes back to itself however it is cut.
    @Test func messagesSurviveInterleavedRealTimeAndAnyChunking() async {
        let message = zip(Gen<UInt8>.uint8(in: 0...7), Gen<UInt8>.uint8(in: 0...15), Gen<UInt8>.uint8(in: 0...127),
                          Gen<UInt8>.uint8(in: 1...127)).map { kind, c, d1, d2 -> MIDIMessage in
                switch kind {
                case 0: .noteOn(channel: c, note: d1, velocity: d2)
                case 1: .noteOff(channel: c, note: d1, velocity: d2)
                case 2: .controlChange(channel: c, controller: d1, value: d2)
                case 3: .pitchBend(channel: c, value: UInt16(d1) << 7 | UInt16(d2))
                case 4: .programChange(channel: c, program: d1)
                case 5: .channelPressure(channel: c, pressure: d1)
                case 6: .polyPressure(channel: c, note: d1, pressure: d2)
                default: .realTime(0xF8 + d1 % 8)
                }
        }
        await propertyCheck(count: 300, input: zip(message.array(of: 0...40), Gen<UInt64>.uint64(in: 1...1_000_000))) { messages, seed in
            // Real-time bytes are put after the status byte of the message that follows them, so
            // they sit inside it; the decoder must still return them first.
            var bytes: [UInt8] = []
            var expected: [MIDIMessage] = []
            var pendingRealTime: [MIDIMessage] = []
            for m in messages {
                if case .realTime = m { pendingRealTime.append(m); continue }
                let b = m.bytes
                bytes.append(b[0])
                bytes += pendingRealTime.flatMap(\.bytes)
                bytes += b.dropFirst()
                expected += pendingRealTime + [m]
                pendingRealTime = []
            }
            bytes += pendingRealTime.flatMap(\.bytes)
            expected += pendingRealTime
            #expect(decodeChunks([bytes]) == expected)
            #expect(decodeChunks(bytes.map { [$0] }) == expected)
            #expect(decodeChunks(randomChunks(bytes, seed: seed, maxChunk: 9)) == expected)
        }
    }
}

@Suite struct NoteNames {
    let vectors: MIDIInputVectors
    init() throws { vectors = try MIDIInputVectors.load() }

    @Test func namesBothWays() {
        for v in vectors.notes {
            #expect(MIDINote(number: v.number)?.name == v.name)
            #expect(MIDINote(name: v.name)?.number == UInt8(v.number))
        }
    }

    @Test func aliasesRead() {
        for v in vectors.note_aliases {
            #expect(MIDINote(name: v.name)?.number == UInt8(v.number), "\(v.name)")
        }
    }

    @Test func badNamesAreRefused() {
        for name in vectors.bad_note_names {
            #expect(MIDINote(name: name) == nil, "\(name.debugDescription)")
        }
    }

    @Test func everyNumberRoundTrips() {
        for n in 0...127 {
            let note = MIDINote(UInt8(n))
            #expect(MIDINote(name: note.name) == note)
            #expect((note.octave + 1) * 12 + note.pitchClass == n)
        }
        #expect(MIDINote(number: 128) == nil && MIDINote(number: -1) == nil)
    }
}

@Suite struct PitchBendValues {
    @Test func bytesAndValues() {
        #expect(PitchBend.value(lsb: 0x00, msb: 0x40) == 8192)
        #expect(PitchBend.value(lsb: 0x7F, msb: 0x7F) == 16383)
        #expect(PitchBend.bytes(8192) == (0x00, 0x40))
        #expect(PitchBend.bytes(16383) == (0x7F, 0x7F))
        #expect(PitchBend.normalized(0) == -1)
        #expect(PitchBend.normalized(8192) == 0)
        #expect(PitchBend.normalized(16383) == 1)
        for v in 0...16383 as ClosedRange<UInt16> {
            let (l, m) = PitchBend.bytes(v)
            #expect(PitchBend.value(lsb: l, msb: m) == v)
        }
    }
}
