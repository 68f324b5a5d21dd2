import BoardProtocol
import Foundation
import PropertyBased
import TestSupport
import Testing

/// What a transcript's reply entry says the host must make of it.
func expectedResponse(_ r: BoardTranscripts.Reply) -> BoardResponse? {
    switch r.response {
    case "done": .done
    case "values": .values(BoardTranscripts.bytes(hex: r.values ?? ""))
    case "flashed": .flashed
    case "undefinedCommand": .undefinedCommand
    default: nil
    }
}

/// Feeds `chunks` to a decoder that expects `replies` in order; returns the replies decoded and
/// any errors.
func decodeAll(_ chunks: [[UInt8]], expecting replies: [BoardTranscripts.Reply]) -> ([BoardReply], [BoardReplyError]) {
    var decoder = BoardReplyDecoder()
    var got: [BoardReply] = []
    var errors: [BoardReplyError] = []
    var next = 0
    if next < replies.count { decoder.expect(replies[next].echo.bytes) }
    for chunk in chunks {
        decoder.append(chunk)
        while true {
            do {
                guard let reply = try decoder.decode() else { break }
                got.append(reply)
                next += 1
                if next < replies.count { decoder.expect(replies[next].echo.bytes) }
            } catch {
                errors.append(error)
            }
        }
    }
    return (got, errors)
}

@Suite struct BoardReplyDecoderGolden {
    let transcripts: BoardTranscripts
    init() throws { transcripts = try BoardTranscripts.load() }

    @Test func theFileCoversEverySectionOneFiveExample() {
        let sends = Set(transcripts.text.map(\.send))
        for example in ["W 0f 64c8\n", "r 0f 02\n", "R 0b 04\n", "F\n", "X 00 00\n", "W 0f 64c8\r\n", "W 0f 6\n"] {
            #expect(sends.contains(example), "missing \(example.debugDescription)")
        }
    }

    /// Every transcript's board output, fed whole, byte by byte and in random chunks, decodes to
    /// the replies the file names and nothing else.
    @Test func everyTranscriptDecodesAsDocumented() throws {
        for step in transcripts.text + transcripts.stock {
            let bytes = step.receive.bytes
            var feeds: [(String, [[UInt8]])] = [("whole", [bytes]), ("byte by byte", bytes.map { [$0] })]
            for seed in 1...5 as ClosedRange<UInt64> { feeds.append(("chunks seed \(seed)", randomChunks(bytes, seed: seed))) }
            for (how, chunks) in feeds {
                let (got, errors) = decodeAll(chunks, expecting: step.replies)
                if step.send.count >= 256 {
                    // The discarded overlong line: its echo and prompt are one unexpected frame.
                    #expect(got.isEmpty && errors.count == 1 && errors.first?.kind == .unexpectedFrame, "\(step.name) \(how)")
                    continue
                }
                #expect(errors.isEmpty, "\(step.name) \(how): \(errors)")
                #expect(got.count == step.replies.count, "\(step.name) \(how)")
                for (reply, want) in zip(got, step.replies) {
                    #expect(reply.echo == want.echo.bytes, "\(step.name) \(how)")
                    #expect(reply.response == expectedResponse(want), "\(step.name) \(how)")
                }
            }
        }
    }
}

@Suite struct BoardReplyDecoderResync {
    let write = "W 22 c040\n".bytes
    var writeReply: [UInt8] { write + "\r\n\r\n>".bytes }

    @Test func aBarePromptIsSkippedSilently() throws {
        var d = BoardReplyDecoder()
        d.expect(write)
        d.append("\r\n>\r\n>".bytes + writeReply)
        #expect(try d.decode() == BoardReply(echo: write, body: []))
        #expect(try d.decode() == nil)
    }

    @Test func garbageIsReportedWithItsBytesThenTheNextFrameDecodes() throws {
        var d = BoardReplyDecoder()
        d.expect(write)
        d.append("noise\u{7}".bytes + "\r\n>".bytes + writeReply)
        #expect(throws: BoardReplyError(.unexpectedFrame, bytes: "noise\u{7}\r\n>".bytes, expected: write)) { try d.decode() }
        #expect(try d.decode() == BoardReply(echo: write, body: []))
    }

    @Test func aWrongEchoIsNotTakenForTheReply() throws {
        var d = BoardReplyDecoder()
        d.expect(write)
        d.append("W 22 0000\n\r\n\r\n>".bytes)
        #expect(throws: BoardReplyError.self) { try d.decode() }
        #expect(d.isExpecting, "the command in flight still waits for its own echo")
        d.append(writeReply)
        #expect(try d.decode()?.echo == write)
    }

    @Test func twoEchoesAwaitedAreMatchedInOrder() throws {
        var d = BoardReplyDecoder()
        let read = "R 07 0b\n".bytes
        d.expect(read)
        d.expect(write)
        #expect(d.expectedCount == 2)
        d.append(read + "\r\nfd 2d 00 00 0a 14 1e ff 00 00 01 \r\n>".bytes + writeReply)
        #expect(try d.decode() == BoardReply(echo: read, body: "fd 2d 00 00 0a 14 1e ff 00 00 01 ".bytes))
        #expect(try d.decode() == BoardReply(echo: write, body: []))
        #expect(try d.decode() == nil)
        #expect(!d.isExpecting)
    }

    @Test func aFrameThatMatchesTheSecondEchoFirstIsUnexpected() throws {
        var d = BoardReplyDecoder()
        let read = "R 07 0b\n".bytes
        d.expect(read)
        d.expect(write)
        d.append(writeReply)
        #expect(throws: BoardReplyError(.unexpectedFrame, bytes: writeReply, expected: read)) { try d.decode() }
        #expect(d.expectedCount == 2, "both still awaited: the read's reply must come first")
        #expect(d.abandon().isEmpty)
        #expect(!d.isExpecting, "abandon forgets every echo")
        d.expect(read)
        d.expect(write)
        d.reset()
        #expect(!d.isExpecting)
    }

    @Test func aPartialFrameIsNeverConsumed() throws {
        var d = BoardReplyDecoder()
        d.expect(write)
        let reply = writeReply
        for b in reply.dropLast() {
            d.append([b])
            #expect(try d.decode() == nil)
        }
        #expect(d.pending == Array(reply.dropLast()))
        d.append([reply.last!])
        #expect(try d.decode() != nil)
    }

    @Test func afterATimeoutTheLateReplyIsSkippedAndTheNextCommandDecodes() throws {
        var d = BoardReplyDecoder()
        d.expect(write)
        d.append("W 22 c0".bytes)
        #expect(d.abandon() == "W 22 c0".bytes)
        let next = "R 22 02\n".bytes
        d.expect(next)
        d.append("40\n\r\n\r\n>".bytes + next + "\r\nc0 40 \r\n>".bytes)
        #expect(throws: BoardReplyError.self) { try d.decode() }
        #expect(try d.decode()?.response == .values([0xC0, 0x40]))
    }

    @Test func aFrameLongerThanTheCapacityOverflowsAndResyncsOnItsPrompt() throws {
        var d = BoardReplyDecoder(capacity: 100)
        d.expect(write)
        d.append([UInt8](repeating: 0x41, count: 150))
        do {
            _ = try d.decode()
            Issue.record("expected an overflow")
        } catch {
            #expect(error.kind == .overflow && error.length == 150)
            #expect(error.description.contains("150 bytes without a prompt"))
        }
        #expect(d.pending.count <= 2)
        d.append([UInt8](repeating: 0x41, count: 30) + "\r\n>".bytes + writeReply)
        #expect(try d.decode()?.echo == write)
    }

    /// Random garbage, then a prompt, then a real reply: the decoder never traps, stays bounded
    /// and decodes the reply, however the bytes are chunked.
    @Test func anyGarbageThenAPromptResynchronises() async {
        let write = self.write
        let reply = writeReply
        await propertyCheck(count: 300, input: Gen<UInt8>.uint8().array(of: 0...300), Gen<UInt64>.uint64()) { garbage, seed in
            var d = BoardReplyDecoder(capacity: 128)
            d.expect(write)
            var got: BoardReply?
            for chunk in randomChunks(garbage + "\r\n>".bytes + reply, seed: seed, maxChunk: 40) {
                d.append(chunk)
                while true {
                    do throws(BoardReplyError) {
                        guard let r = try d.decode() else { break }
                        got = r
                    } catch {
                        #expect(error.bytes.count <= BoardReplyError.evidenceLimit)
                    }
                }
                #expect(d.pending.count <= 128 + 40)
            }
            #expect(got == BoardReply(echo: write, body: []))
        }
    }

    @Test func errorsShowTheBytesReadably() {
        let e = BoardReplyError(.unexpectedFrame, bytes: "ab\r\n>".bytes, expected: "W 22 00\n".bytes)
        #expect(e.description == #"unexpected reply "ab\r\n>" while waiting for the echo of "W 22 00\n"; skipped up to its prompt"#)
    }
}

@Suite struct BoardResponseParsing {
    @Test func bodies() {
        #expect(BoardResponse(body: []) == .done)
        #expect(BoardResponse(body: "64 c8 ".bytes) == .values([0x64, 0xC8]))
        #expect(BoardResponse(body: "flash memmap.\r\n".bytes) == .flashed)
        #expect(BoardResponse(body: "error:undefined cmd or fmt.\r\n".bytes) == .undefinedCommand)
        #expect(BoardResponse(body: "64 c8".bytes) == .unrecognised("64 c8".bytes))
        #expect(BoardResponse(body: "6x ".bytes) == .unrecognised("6x ".bytes))
    }

    @Test func bodyRoundTrips() async {
        await propertyCheck(count: 200, input: Gen<UInt8>.uint8().array(of: 1...40)) { values in
            let r = BoardResponse.values(values)
            #expect(BoardResponse(body: r.body) == r)
        }
    }
}

/// Protocol.md §4–5 shows the golden transcripts; a transcript changed in one place must change
/// in both.
@Suite struct ProtocolDocumentShowsTheTranscripts {
    @Test func everyTextCommandAndEveryPacketAppears() throws {
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        let transcripts = try BoardTranscripts.load()
        for step in transcripts.text + transcripts.stock where !step.send.isEmpty && step.send.count < 40 {
            let lines = step.send.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            for line in lines.isEmpty ? [Substring(step.send)] : lines {
                let shown = "`" + ByteText.escaped((line + (step.send.hasSuffix("\n") ? "\n" : "")).bytes) + "`"
                #expect(spec.contains(shown), "Protocol.md lacks \(shown)")
            }
        }
        for c in transcripts.midi.sysex {
            #expect(spec.contains(c.packets.map { "`\($0)`" }.joined(separator: " ")), "Protocol.md lacks the packets of \(c.body.debugDescription)")
        }
        for r in transcripts.midi.replies { #expect(spec.contains(r.rawmidi)) }
    }
}
