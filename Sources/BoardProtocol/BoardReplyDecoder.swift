/// Splits the bytes a board sends into transactions: a single-step decoder.
///
/// Every transaction ends with the prompt `\r\n>`, so the stream is cut at each prompt into
/// *frames*. The commands in flight (at most ``maximumExpected``, oldest first) are answered in
/// the order they were sent: a frame that starts with the echo of the *oldest*, then `\r\n`, is
/// its reply. Anything else — also a frame that matches a later command's echo first — is
/// reported as an error carrying its bytes and skipped through its prompt: that is how the
/// decoder resynchronises after garbage, a late reply, or a timeout. An empty frame (a bare
/// prompt, as at boot) is skipped silently.
///
/// Contract: call ``decode()`` until it returns nil after every ``append(_:)``. A partial frame is
/// never consumed. The buffer is bounded by ``capacity``: a frame longer than that is reported as
/// ``BoardReplyError/Kind/overflow`` and dropped up to its prompt.
package struct BoardReplyDecoder: Sendable {
    /// `\r\n>`: what the firmware prints after every line (and once at boot).
    package static let prompt: [UInt8] = [0x0D, 0x0A, 0x3E]

    /// Larger than any legal frame (a 255-character echo plus a long `G` reply).
    package let capacity: Int
    private var buffer: [UInt8] = []
    /// The echoes awaited, oldest first.
    private var expected: [[UInt8]] = []
    /// After an overflow: drop bytes up to and including the next prompt.
    private var discarding = false

    package init(capacity: Int = 2048) {
        self.capacity = max(capacity, 64)
    }

    /// How many command lines may be awaited at once (a read and one write behind it,
    /// Protocol.md §4.6 rule 1).
    package static let maximumExpected = 2

    /// A command line now in flight (exactly the bytes sent), after those already awaited. Its
    /// reply is the frame starting with this echo that comes once the earlier ones are
    /// answered. Precondition: fewer than ``maximumExpected`` are awaited.
    package mutating func expect(_ line: [UInt8]) {
        precondition(expected.count < Self.maximumExpected, "BoardReplyDecoder: at most \(Self.maximumExpected) commands awaited")
        expected.append(line)
    }

    /// The commands in flight timed out: stop waiting for all of them and drop the partial
    /// frame, which is returned as evidence. The rest of a late reply then arrives as a frame
    /// without an awaited echo, and is reported and skipped through its prompt like any other
    /// unexpected frame.
    @discardableResult
    package mutating func abandon() -> [UInt8] {
        expected.removeAll()
        let partial = buffer
        buffer.removeAll(keepingCapacity: true)
        return partial
    }

    /// Forgets everything (a new connection).
    package mutating func reset() {
        buffer.removeAll()
        expected.removeAll()
        discarding = false
    }

    package var isExpecting: Bool { !expected.isEmpty }
    /// How many replies are awaited.
    package var expectedCount: Int { expected.count }
    /// Bytes received but not yet part of a complete frame.
    package var pending: [UInt8] { buffer }

    package mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next reply, nil if no complete frame is buffered, or an error for a frame that is not
    /// the reply expected (it has been consumed: call again).
    package mutating func decode() throws(BoardReplyError) -> BoardReply? {
        while true {
            guard let end = Self.firstPrompt(in: buffer) else {
                if buffer.count > capacity {
                    let evidence = Array(buffer.prefix(BoardReplyError.evidenceLimit))
                    let total = buffer.count
                    // Keep the last two bytes: they may be the start of a prompt.
                    buffer.removeFirst(buffer.count - 2)
                    discarding = true
                    throw BoardReplyError(.overflow, bytes: evidence, length: total, expected: expected.first)
                }
                return nil
            }
            let frame = Array(buffer[..<end])
            buffer.removeFirst(end)
            if discarding {
                discarding = false
                continue
            }
            var content = frame.dropLast(Self.prompt.count)
            // Stray prompt bytes before an echo (the tail of a prompt split by a timeout, a boot
            // prompt) are not an error; an echo that itself starts with one is matched as is.
            if !(expected.first?.first.map(Self.isPromptByte) ?? false) {
                content = content.drop(while: Self.isPromptByte)
            }
            if content.isEmpty { continue }
            if let echo = expected.first, content.starts(with: echo + [0x0D, 0x0A]) {
                expected.removeFirst()
                return BoardReply(echo: echo, body: Array(content.dropFirst(echo.count + 2)))
            }
            throw BoardReplyError(.unexpectedFrame, bytes: Array(frame.prefix(BoardReplyError.evidenceLimit)),
                                  length: frame.count, expected: expected.first)
        }
    }

    static func isPromptByte(_ b: UInt8) -> Bool { b == 0x0D || b == 0x0A || b == 0x3E }

    /// The index just past the first `\r\n>`, or nil.
    static func firstPrompt(in bytes: [UInt8]) -> Int? {
        var i = 0
        let n = bytes.count
        while i + 2 < n {
            if bytes[i + 2] == 0x3E && bytes[i + 1] == 0x0A && bytes[i] == 0x0D { return i + 3 }
            i += 1
        }
        return nil
    }
}

/// A frame that was not the reply expected, with its bytes as evidence.
package struct BoardReplyError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Kind: String, Hashable, Sendable {
        /// A complete frame that does not start with the echo of the oldest command in flight (a late
        /// reply, line noise, a board that garbled the echo, output from another program).
        case unexpectedFrame
        /// More than ``BoardReplyDecoder/capacity`` bytes without a prompt.
        case overflow
    }

    package let kind: Kind
    /// The frame (or its first ``evidenceLimit`` bytes).
    package let bytes: [UInt8]
    /// The full length of the frame.
    package let length: Int
    /// The echo that was expected (the oldest command in flight's), if any.
    package let expected: [UInt8]?

    package static let evidenceLimit = 256

    package init(_ kind: Kind, bytes: [UInt8], length: Int? = nil, expected: [UInt8]? = nil) {
        self.kind = kind
        self.bytes = bytes
        self.length = length ?? bytes.count
        self.expected = expected
    }

    package var description: String {
        let expecting = expected.map { " while waiting for the echo of \(ByteText.evidence($0))" } ?? ""
        switch kind {
        case .unexpectedFrame:
            return "unexpected reply \(ByteText.evidence(bytes))\(length > bytes.count ? " (\(length) bytes)" : "")\(expecting); skipped up to its prompt"
        case .overflow:
            return "\(length) bytes without a prompt \(ByteText.evidence(bytes))\(expecting); skipping to the next prompt"
        }
    }
}
