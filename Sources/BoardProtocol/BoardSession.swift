/// The host side of the conversation with one board: one command in flight at a time, a reply
/// timeout, resynchronisation. A value type: the caller does the I/O and passes the time in.
///
/// ```
///   idle ──start(cmd)──▶ in flight ──reply frame──▶ idle   (.completed / .failed(.rejected…))
///                           │ no byte for replyTimeout
///                           └──────────────────────▶ idle   (.failed(.timeout), decoder abandons)
/// ```
/// The timeout counts from the last byte received, not from the send: a slow (9600 baud) board
/// that is still echoing a long line is not timed out, a silent one is.
package struct BoardSession: Sendable {
    package enum Event: Hashable, Sendable {
        /// The board answered the command in flight as expected.
        case completed(BoardCommand, BoardResponse)
        /// The command in flight failed: the board rejected it, answered something else, or
        /// stayed silent. Nothing is in flight any more.
        case failed(BoardCommand, BoardSessionError)
        /// Bytes that answered no command in flight (a late reply, noise); skipped.
        case noise(BoardReplyError)
    }

    package var replyTimeout: Duration
    package private(set) var inFlight: BoardCommand?
    private var decoder: BoardReplyDecoder
    private var lastActivity: ContinuousClock.Instant?
    /// Timeouts in a row without any complete reply in between (a board that stopped answering).
    package private(set) var consecutiveTimeouts = 0

    package init(replyTimeout: Duration = .milliseconds(100), bufferCapacity: Int = 2048) {
        self.replyTimeout = replyTimeout
        self.decoder = BoardReplyDecoder(capacity: bufferCapacity)
    }

    package var isIdle: Bool { inFlight == nil }

    /// When ``checkTimeout(now:)`` should be called next (nil: nothing in flight).
    package var deadline: ContinuousClock.Instant? {
        guard inFlight != nil, let lastActivity else { return nil }
        return lastActivity + replyTimeout
    }

    /// Starts `command` and returns the bytes to write. Precondition: ``isIdle``.
    package mutating func start(_ command: BoardCommand, now: ContinuousClock.Instant) -> [UInt8] {
        precondition(inFlight == nil, "BoardSession: one command in flight at a time")
        let line = command.line
        inFlight = command
        lastActivity = now
        decoder.expect(line)
        return line
    }

    /// Bytes from the board (already unwrapped from any MIDI framing).
    package mutating func receive(_ bytes: some Collection<UInt8>, now: ContinuousClock.Instant) -> [Event] {
        if bytes.isEmpty { return [] }
        if inFlight != nil { lastActivity = now }
        decoder.append(bytes)
        var events: [Event] = []
        while true {
            do {
                guard let reply = try decoder.decode() else { break }
                guard let command = inFlight else { continue }
                inFlight = nil
                consecutiveTimeouts = 0
                events.append(Self.judge(command, reply))
            } catch {
                events.append(.noise(error))
            }
        }
        return events
    }

    /// Times the command in flight out if no byte came for ``replyTimeout``.
    package mutating func checkTimeout(now: ContinuousClock.Instant) -> Event? {
        guard let command = inFlight, let deadline, now >= deadline else { return nil }
        inFlight = nil
        consecutiveTimeouts += 1
        let partial = decoder.abandon()
        return .failed(command, BoardSessionError(.timeout, command: command, bytes: partial, timeout: replyTimeout))
    }

    /// A new connection: forget the command in flight and any partial input.
    package mutating func reset() {
        inFlight = nil
        lastActivity = nil
        consecutiveTimeouts = 0
        decoder.reset()
    }

    /// Checks that the reply fits the command.
    static func judge(_ command: BoardCommand, _ reply: BoardReply) -> Event {
        let response = reply.response
        switch (command, response) {
        case (.write, .done), (.eepromWrite, .done), (.flash, .flashed), (.read, .values), (.eepromRead, .values):
            return .completed(command, response)
        case (.read, .done), (.eepromRead, .done):
            // Zero bytes requested, or an address past the end: the firmware prints nothing.
            return .completed(command, .values([]))
        case (_, .undefinedCommand):
            return .failed(command, BoardSessionError(.rejected, command: command, bytes: reply.body))
        default:
            return .failed(command, BoardSessionError(.unexpectedResponse, command: command, bytes: reply.body))
        }
    }
}

/// Why a command failed, with the bytes that showed it.
package struct BoardSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Kind: String, Hashable, Sendable {
        /// No byte for the reply timeout (`bytes`: what had arrived of the reply).
        case timeout
        /// The board answered `error:undefined cmd or fmt.`.
        case rejected
        /// A reply of the wrong kind (`bytes`: its body).
        case unexpectedResponse
    }

    package let kind: Kind
    package let command: BoardCommand
    package let bytes: [UInt8]
    package let timeout: Duration?

    package init(_ kind: Kind, command: BoardCommand, bytes: [UInt8], timeout: Duration? = nil) {
        self.kind = kind
        self.command = command
        self.bytes = bytes
        self.timeout = timeout
    }

    package var description: String {
        switch kind {
        case .timeout:
            let got = bytes.isEmpty ? "nothing" : ByteText.evidence(bytes)
            return "no reply to \"\(command.text)\" within \(Self.milliseconds(timeout ?? .zero)) ms of silence (received \(got))"
        case .rejected:
            return "the board rejected \"\(command.text)\": \(ByteText.evidence(bytes))"
        case .unexpectedResponse:
            return "unexpected reply to \"\(command.text)\": \(ByteText.evidence(bytes))"
        }
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        return s * 1000 + atto / 1_000_000_000_000_000
    }
}
