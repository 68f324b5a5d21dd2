import MIDIFraming
import PropertyBased
import TestSupport
import Testing

func hex(_ s: String) -> [UInt8] { BoardTranscripts.bytes(hex: s) }

@Suite struct SysExFramingTests {
    let transcripts: BoardTranscripts
    init() throws { transcripts = try BoardTranscripts.load() }

    @Test func theResearchExample() throws {
        #expect(try SysEx.frame("W 0f 64c8\n".bytes) == hex("F0 57 20 30 66 20 36 34 63 38 0A F7"))
    }

    @Test func theLFIsAlwaysSent() throws {
        #expect(try SysEx.frame("F".bytes) == hex("F0 46 0A F7"))
        #expect(try SysEx.frame([UInt8]()) == hex("F0 0A F7"))
        #expect(try SysEx.frame("F\n".bytes) == hex("F0 46 0A F7"))
    }

    @Test(arguments: [0x80, 0xF7, 0xF0, 0xFF, 0x90] as [UInt8])
    func aStatusByteIsRefused(byte: UInt8) {
        #expect(throws: MIDIFramingError(.statusByteInBody, byte: byte, offset: 2, line: [0x57, 0x20, byte, 0x0A])) {
            try SysEx.frame([0x57, 0x20, byte, 0x0A])
        }
    }

    @Test func everyLFTerminatedBodyInTheTranscriptsFramesAsListed() throws {
        for c in transcripts.midi.sysex where c.body.hasSuffix("\n") {
            #expect(try SysEx.frame(c.body.bytes) == hex(c.rawmidi), "\(c.body.debugDescription)")
        }
    }

    @Test func anyASCIILineFramesToF0BodyLFF7() async {
        await propertyCheck(count: 500, input: Gen<UInt8>.uint8(in: 0...0x7F).array(of: 0...200)) { body in
            let framed = try SysEx.frame(body)
            #expect(framed.first == 0xF0 && framed.last == 0xF7)
            let inner = Array(framed.dropFirst().dropLast())
            #expect(inner.allSatisfy { $0 < 0x80 })
            #expect(inner.last == 0x0A)
            #expect(inner == (body.last == 0x0A ? body : body + [0x0A]))
        }
    }
}

@Suite struct USBMIDIPacketizerTests {
    let transcripts: BoardTranscripts
    init() throws { transcripts = try BoardTranscripts.load() }

    func packets(_ rawmidi: String) -> [String] {
        var p = USBMIDIPacketizer()
        return p.push(hex(rawmidi)).map(\.description)
    }

    @Test func sectionThreeFourSysExTable() {
        for c in transcripts.midi.sysex {
            #expect(packets(c.rawmidi) == c.packets, "\(c.body.debugDescription)")
        }
    }

    @Test func sectionThreeFourOtherStreams() {
        for c in transcripts.midi.other {
            #expect(packets(c.rawmidi) == c.packets, "\(c.name)")
        }
    }

    @Test func aStatusByteInsideASysExAbortsItWithoutAnEnd() {
        #expect(packets("F0 57 20 30 90 3C 40") == ["04 F0 57 20", "09 90 3C 40"])
    }

    /// Any SysEx of ASCII: the packets' payload bytes, in order, are exactly the SysEx.
    @Test func packetsCarryTheSysExVerbatim() async {
        await propertyCheck(count: 300, input: Gen<UInt8>.uint8(in: 0...0x7F).array(of: 0...100)) { body in
            var p = USBMIDIPacketizer()
            let stream = [0xF0] + body + [0xF7]
            let packets = p.push(stream)
            #expect(packets.flatMap(\.midiBytes) == stream)
            #expect(packets.dropLast().allSatisfy { $0.codeIndexNumber == 4 })
            #expect([5, 6, 7].contains(packets.last?.codeIndexNumber ?? 0))
        }
    }
}

@Suite struct NotePairTests {
    let transcripts: BoardTranscripts
    init() throws { transcripts = try BoardTranscripts.load() }

    @Test func thePrompt() {
        for r in transcripts.midi.replies {
            #expect(NotePairs.packets(r.text.bytes).map(\.description) == r.packets)
            #expect(NotePairs.encode(r.text.bytes) == hex(r.rawmidi))
            #expect(NotePairs.packets(r.text.bytes).flatMap(\.midiBytes) == hex(r.rawmidi), "what Linux delivers")
            var d = NotePairDecoder()
            #expect(d.decode(hex(r.rawmidi)) == r.text.bytes)
        }
    }

    /// Every MIDI session reply in the transcripts decodes to its text, fed whole, byte by byte
    /// and in random chunks.
    @Test func sessionRepliesDecodeHoweverTheyAreChunked() {
        for step in transcripts.midi.session {
            let bytes = hex(step.receive)
            var feeds: [[[UInt8]]] = [[bytes], bytes.map { [$0] }]
            for seed in 1...8 as ClosedRange<UInt64> { feeds.append(randomChunks(bytes, seed: seed)) }
            for chunks in feeds {
                var d = NotePairDecoder()
                #expect(chunks.flatMap { d.decode($0) } == step.text.bytes, "\(step.name)")
            }
        }
    }

    static let asciiText = Gen<UInt8>.uint8(in: 1...0x7F).array(of: 0...120)

    @Test func encodeThenDecodeIsTheText() async {
        await propertyCheck(count: 500, input: Self.asciiText, Gen<UInt64>.uint64()) { text, seed in
            let midi = NotePairs.encode(text)
            #expect(midi.count == (text.count + 1) / 2 * 3)
            var d = NotePairDecoder()
            #expect(randomChunks(midi, seed: seed).flatMap { d.decode($0) } == text)
        }
    }

    /// A sender that uses running status (drops every repeated 0x90).
    @Test func runningStatusIsTolerated() async {
        await propertyCheck(count: 300, input: Self.asciiText) { text in
            var midi = NotePairs.encode(text)
            var i = 3
            while i < midi.count { midi.remove(at: i); i += 2 }
            var d = NotePairDecoder()
            #expect(d.decode(midi) == text)
        }
    }

    /// A stack that rewrote the velocity-0 pad note as a Note-Off with velocity 0x40.
    @Test func aPadRewrittenAsNoteOffIsTolerated() async {
        await propertyCheck(count: 300, input: Self.asciiText.filter { $0.count % 2 == 1 }) { text in
            var midi = NotePairs.encode(text)
            let n = midi.count
            #expect(midi[n - 1] == 0)
            midi[n - 3] = 0x80
            midi[n - 1] = 0x40
            var d = NotePairDecoder()
            #expect(d.decode(midi) == text)
        }
    }

    @Test func noteOffRewriteWithRunningStatus() {
        var d = NotePairDecoder()
        // ">" + pad as a Note-Off after two Note-Ons under running status.
        #expect(d.decode(hex("90 0D 0A 0D 0A 80 3E 40")) == "\r\n\r\n>".bytes)
    }

    /// Real-time bytes anywhere, and unrelated messages between the notes, never become text.
    @Test func realTimeBytesAndOtherMessagesAreSkipped() async {
        await propertyCheck(count: 300, input: Self.asciiText, Gen<UInt64>.uint64()) { text, seed in
            var rng = SplitMix(seed: seed)
            var midi: [UInt8] = []
            for (i, b) in NotePairs.encode(text).enumerated() {
                if Bool.random(using: &rng) { midi.append(UInt8.random(in: 0xF8...0xFF, using: &rng)) }
                if i % 3 == 0 && Bool.random(using: &rng) { midi += [0xB0, 0x07, 0x64, 0xC0, 0x05, 0xF0, 0x41, 0x42, 0xF7] }
                midi.append(b)
            }
            var d = NotePairDecoder()
            #expect(d.decode(midi) == text)
        }
    }

    @Test func dataWithoutAStatusIsNotText() {
        var d = NotePairDecoder()
        #expect(d.decode("hello".bytes).isEmpty)
        #expect(d.decode(hex("F0 41 42 F7 43 44")).isEmpty)
    }

    @Test func charactersAreMaskedToSevenBitsAsTheFirmwareDoes() {
        #expect(NotePairs.encode([0xF7, 0x0D, 0x0A]) == hex("90 77 0D 90 0A 00"))
    }
}
