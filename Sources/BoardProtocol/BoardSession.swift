/// The host side of the conversation with one board: the commands in flight, a reply timeout,
/// resynchronisation. A value type: the caller does the I/O and passes the time in.
///
/// ```
///   idle ──start(cmd)──▶ in flight ──reply frame──▶ idle   (.completed / .failed(.rejected…))
///                           │ no byte for replyTimeout
///                           └──────────────────────▶ idle   (.failed(.timeout), decoder abandons)
/// ```
/// In flight is one command, or — for a link that opts into it (Protocol.md §4.6 rules 1 and 8,
/// `BoardOptions.writeBehindRead` in BoardLink) — a read `R` and one write `W` sent behind it before its
/// prompt: the firmware takes every complete line waiting in one pass of its loop and answers
/// them in order, so a write need not wait a pass for the read's prompt.
/// Nothing goes behind a `W`, never two reads, never more than two (``canStart(_:)``). Replies
/// complete the commands in the order sent.
///
/// The timeout counts from the last byte received or the last command sent, not from the first
/// send: a slow (9600 baud) board that is still echoing a long line is not timed out, a silent
/// one is. When it fires, every command in flight fails.
package struct BoardSession: Sendable {
    package enum Event: Hashable, Sendable {
        /// The board answered the oldest command in flight as expected.
        case completed(BoardCommand, BoardResponse)
        /// A command in flight failed: the board rejected it, answered something else, or
        /// stayed silent (then every command in flight fails, oldest first).
        case failed(BoardCommand, BoardSessionError)
        /// Bytes that answered no command in flight (a late reply, noise); skipped.
        case noise(BoardReplyError)
    }

    package var replyTimeout: Duration
    /// The commands sent and not yet answered, oldest first: empty, one, or a read and a write.
    package private(set) var inFlight: [BoardCommand] = []
    private var decoder: BoardReplyDecoder
    private var lastActivity: ContinuousClock.Instant?
    /// Reply timeouts in a row without any complete reply in between (a board that stopped
    /// answering). One timeout fails every command in flight and counts once.
    package private(set) var consecutiveTimeouts = 0

    package init(replyTimeout: Duration = .milliseconds(100), bufferCapacity: Int = 2048) {
        self.replyTimeout = replyTimeout
        self.decoder = BoardReplyDecoder(capacity: bufferCapacity)
    }

    /// Nothing in flight.
    package var isIdle: Bool { inFlight.isEmpty }

    /// When ``checkTimeout(now:)`` should be called next (nil: nothing in flight).
    package var deadline: ContinuousClock.Instant? {
        guard !inFlight.isEmpty, let lastActivity else { return nil }
        return lastActivity + replyTimeout
    }

    /// Whether `command` may be sent now: on an idle session any command; behind exactly one
    /// read (`R`) in flight, one write (`W`); nothing else.
    package func canStart(_ command: BoardCommand) -> Bool {
        switch inFlight.count {
        case 0: return true
        case 1:
            guard case .read = inFlight[0], case .write = command else { return false }
            return true
        default: return false
        }
    }

    /// Starts `command` and returns the bytes to write. Precondition: ``canStart(_:)`` (idle, or
    /// a write behind one read).
    package mutating func start(_ command: BoardCommand, now: ContinuousClock.Instant) -> [UInt8] {
        precondition(canStart(command), "BoardSession: one command in flight, or one W behind one R")
        let line = command.line
        inFlight.append(command)
        lastActivity = now
        decoder.expect(line)
        return line
    }

    /// Bytes from the board (already unwrapped from any MIDI framing).
    package mutating func receive(_ bytes: some Collection<UInt8>, now: ContinuousClock.Instant) -> [Event] {
        if bytes.isEmpty { return [] }
        if !inFlight.isEmpty { lastActivity = now }
        decoder.append(bytes)
        var events: [Event] = []
        while true {
            do {
                guard let reply = try decoder.decode() else { break }
                guard !inFlight.isEmpty else { continue }
                let command = inFlight.removeFirst()
                consecutiveTimeouts = 0
                events.append(Self.judge(command, reply))
            } catch {
                events.append(.noise(error))
            }
        }
        return events
    }

    /// Times the commands in flight out if no byte came for ``replyTimeout``: one
    /// `.failed(.timeout)` for each, oldest first (the partial frame, as evidence, with the
    /// oldest: it is the one being answered). Empty when nothing timed out.
    package mutating func checkTimeout(now: ContinuousClock.Instant) -> [Event] {
        guard !inFlight.isEmpty, let deadline, now >= deadline else { return [] }
        let commands = inFlight
        inFlight.removeAll()
        consecutiveTimeouts += 1
        let partial = decoder.abandon()
        return commands.enumerated().map { i, command in
            .failed(command, BoardSessionError(.timeout, command: command, bytes: i == 0 ? partial : [], timeout: replyTimeout))
        }
    }

    /// A new connection: forget the commands in flight and any partial input.
    package mutating func reset() {
        inFlight.removeAll()
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
