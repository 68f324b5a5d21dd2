import RemoteWire

/// The payloads of control messages (Protocol.md §7). Strings are UTF-8 with a one-byte length
/// prefix (`str8`); integers are big-endian.
package enum ControlMessage: Hashable, Sendable {
    /// Controller → receiver: who I am and, for `--accept paired`, the pairing code.
    case hello(Hello)
    /// Receiver → controller: you may drive; here is my timing contract.
    case accept(Accept)
    /// Receiver → controller: you may not drive, and why.
    case deny(Deny)
    /// Either side: I am leaving (the receiver frees the robot at once).
    case bye
    /// Round-trip probe; the pong echoes `id` and `sentNanos` unchanged.
    case ping(id: UInt32, sentNanos: UInt64)
    case pong(id: UInt32, sentNanos: UInt64)
    /// Application data on a numbered channel (the button game uses channel 1), up to 64 KiB.
    case data(channel: UInt8, bytes: [UInt8])
    /// Application data on a numbered channel, unreliable: one datagram of at most
    /// ``datagramLimit`` application bytes (Protocol.md §7.13).
    case datagram(channel: UInt8, bytes: [UInt8])
    /// Selective acknowledgement: bit i set = sequence `header.ack + 2 + i` has arrived too.
    case ack(selective: UInt64)
    /// Teacher stop-all: hold every robot of the session in the safe state, or release them.
    case stopAll(StopAll)
    /// Receiver → the stop-all sender: what it made of one stop-all datagram.
    case stopAllReply(StopAllReply)
    /// Receiver → controller under `--accept secret`: the receiver's 16-byte nonce, and the
    /// hello nonce of the hello it answers (0: the hello carried none).
    case challenge(nonce: [UInt8], echo: UInt64)
    /// Controller → receiver: its own 16-byte nonce and HMAC-SHA256 over both (``SecretHandshake``).
    case proof(nonce: [UInt8], mac: [UInt8])

    /// Both handshake nonces are this long.
    package static let nonceSize = 16
    package static let proofSize = 32
    /// The most application bytes one unreliable ``datagram(channel:bytes:)`` carries, so that
    /// the whole datagram stays within 1 KB (GameKit's advice) with a version-2 header.
    package static let datagramLimit = ControlHeader.maxPayload - 1
    /// Receiver → controller: the robot's state for this controller (RobotReport.swift).
    case robotState(RobotReport)
    /// Receiver → controller: what the robot senses (RobotSensors.swift).
    case robotSensors(RobotSensors)
    /// Teacher's dashboard → receiver: watch, identify, kick, lock (TeacherMessages.swift, §7.10).
    case teacher(TeacherCommand)
    case teacherReply(TeacherReply)
    /// Watched receiver → dashboard: one row of the dashboard (§7.12).
    case watchReport(WatchReport)

    package var type: ControlType {
        switch self {
        case .hello: .hello
        case .accept: .accept
        case .deny: .deny
        case .bye: .bye
        case .ping: .ping
        case .pong: .pong
        case .data: .data
        case .datagram: .datagram
        case .ack: .ack
        case .stopAll: .stopAll
        case .stopAllReply: .stopAllReply
        case .challenge: .challenge
        case .proof: .proof
        case .robotState: .robotState
        case .robotSensors: .robotSensors
        case .teacher: .teacher
        case .teacherReply: .teacherReply
        case .watchReport: .watchReport
        }
    }

    package struct Hello: Hashable, Sendable {
        package var peerID: UInt64
        package var displayName: WireText
        package var pairingCode: WireText
        package var session: WireText
        /// Fresh random per hello (never 0; 0 = absent, a controller that predates it). Every
        /// accept, deny and challenge that answers this hello echoes it (Protocol.md §7.4), so a
        /// controller can tell the answer to *its* hello from one to a hello someone forged
        /// from its address.
        package var nonce: UInt64
        package init(peerID: UInt64, displayName: WireText, pairingCode: WireText = "", session: WireText = "", nonce: UInt64 = 0) {
            self.peerID = peerID; self.displayName = displayName; self.pairingCode = pairingCode; self.session = session
            self.nonce = nonce
        }

        /// A fresh hello nonce from the system's CSPRNG, never 0.
        package static func freshNonce() -> UInt64 {
            var rng = SystemRandomNumberGenerator()
            return UInt64.random(in: 1...UInt64.max, using: &rng)
        }
    }

    package struct Accept: Hashable, Sendable {
        package var peerID: UInt64
        package var displayName: WireText
        package var failsafeMilliseconds: UInt16
        package var rateHertz: UInt16
        /// The nonce of the hello this accept answers (0: it carried none).
        package var echo: UInt64
        package init(peerID: UInt64, displayName: WireText, failsafeMilliseconds: UInt16, rateHertz: UInt16, echo: UInt64 = 0) {
            self.peerID = peerID; self.displayName = displayName
            self.failsafeMilliseconds = failsafeMilliseconds; self.rateHertz = rateHertz; self.echo = echo
        }
    }

    package struct Deny: Hashable, Sendable {
        package enum Reason: UInt8, Hashable, Sendable {
            case pairingRequired = 1, wrongPairingCode = 2, busy = 3, wrongSession = 4, stoppedByTeacher = 5,
                 unsupportedVersion = 6, rateLimited = 7,
                 /// The teacher freed the robot from this controller (§7.10); the text says why.
                 kicked = 10,
                 /// The teacher locked the robot to another student (§7.10).
                 locked = 11, other = 255
        }
        package var reason: Reason
        package var text: WireText
        /// The nonce of the hello this deny answers (0: it carried none, or the deny answers a
        /// plain sender's state packets).
        package var echo: UInt64
        package init(reason: Reason, text: WireText, echo: UInt64 = 0) { self.reason = reason; self.text = text; self.echo = echo }
    }

    package struct StopAll: Hashable, Sendable {
        /// `query` (3) changes nothing: a receiver answers with its name and whether it holds,
        /// so a sender can name it as the ``target`` of the signed command that follows.
        package enum Action: UInt8, Hashable, Sendable { case stop = 1, release = 2, query = 3 }
        package var action: Action
        /// Sender's wall clock, ms since 1970: receivers refuse a command more than 30 s off
        /// their own clock, and one not newer than the last they obeyed (replay).
        package var unixMillis: UInt64
        /// Fresh per command (random): a receiver takes a nonce at most once.
        package var nonce: UInt64
        package var session: WireText
        /// The receiver this command is for — `id:` and its robot id (as its stop-all reply
        /// names it), or its display name — or empty: every receiver of the session. Signed with the rest, so a command captured on
        /// its way to one robot is refused by every other.
        package var target: WireText
        /// First 16 bytes of HMAC-SHA256(teacher key, every payload byte before the MAC);
        /// all zero when no key is set.
        package var mac: [UInt8]

        package init(action: Action, unixMillis: UInt64, nonce: UInt64, session: WireText, target: WireText = "",
                    mac: [UInt8] = .init(repeating: 0, count: 16)) {
            self.action = action; self.unixMillis = unixMillis; self.nonce = nonce; self.session = session
            self.target = target; self.mac = mac
        }

        /// The bytes the MAC covers.
        package var signedBytes: [UInt8] {
            var w = ByteWriter()
            w.u8(action.rawValue); w.u64(unixMillis); w.u64(nonce); w.str8(session); w.str8(target)
            return w.bytes
        }
    }

    /// A receiver's answer to each stop-all datagram it reads, so the teacher sees who was
    /// reached and who refused (and why) instead of sending into the dark.
    package struct StopAllReply: Hashable, Sendable {
        package enum Outcome: UInt8, Hashable, Sendable {
            /// Holding the robot in the safe state (the command was a stop, new or repeated).
            case stopped = 1
            /// Not holding (the command was a release, new or repeated).
            case released = 2
            /// The command was not obeyed; ``text`` says why.
            case refused = 3
        }
        /// The nonce of the stop-all answered.
        package var nonce: UInt64
        package var outcome: Outcome
        /// The receiver's display name.
        package var displayName: WireText
        /// Refused: why. Stopped or released: the target that names this receiver alone,
        /// `id:` and its robot id (Protocol.md §7.6.1), or empty from a receiver without one.
        package var text: WireText
        /// From a receiver with a teacher key: the first 16 bytes of HMAC-SHA256(MAC key,
        /// "AR stop-all reply" ‖ every payload byte before it), so a reply cannot be forged to
        /// tell the teacher a robot stopped (Protocol.md §7.6). Empty: unsigned.
        package var mac: [UInt8]

        package init(nonce: UInt64, outcome: Outcome, displayName: WireText, text: WireText = "", mac: [UInt8] = []) {
            self.nonce = nonce; self.outcome = outcome; self.displayName = displayName; self.text = text; self.mac = mac
        }

        /// The robot id the reply names (``text`` on a stopped or released reply), if any.
        package var robotID: RobotID? { outcome == .refused ? nil : RobotID(target: text.text) }

        /// Says what the MAC is for (signing is ControlPlane's).
        package static let label = Array("AR stop-all reply".utf8)

        /// The bytes the MAC covers (after its label).
        package var signedBytes: [UInt8] {
            var w = ByteWriter()
            w.u64(nonce); w.u8(outcome.rawValue); w.str8(displayName); w.str8(text)
            return w.bytes
        }
    }

    /// The payload bytes (after the header).
    package func encodePayload() -> [UInt8] {
        var w = ByteWriter()
        switch self {
        case .hello(let h): w.u64(h.peerID); w.str8(h.displayName); w.str8(h.pairingCode); w.str8(h.session); w.nonce(h.nonce)
        case .accept(let a): w.u64(a.peerID); w.str8(a.displayName); w.u16(a.failsafeMilliseconds); w.u16(a.rateHertz); w.nonce(a.echo)
        case .deny(let d): w.u8(d.reason.rawValue); w.str8(d.text); w.nonce(d.echo)
        case .bye: break
        case .ping(let id, let t), .pong(let id, let t): w.u32(id); w.u64(t)
        case .data(let channel, let bytes), .datagram(let channel, let bytes): w.u8(channel); w.raw(bytes)
        case .ack(let bits): w.u64(bits)
        case .stopAll(let s): w.raw(s.signedBytes); w.raw(s.mac.prefix(16)); if s.mac.count < 16 { w.raw(repeatElement(0, count: 16 - s.mac.count)) }
        case .stopAllReply(let r): w.raw(r.signedBytes); if r.mac.count == 16 { w.raw(r.mac) }
        case .challenge(let nonce, let echo): w.raw(nonce); w.nonce(echo)
        case .proof(let nonce, let mac): w.raw(nonce); w.raw(mac)
        case .robotState(let report): return report.encodePayload()
        case .robotSensors(let sensors): return sensors.encodePayload()
        case .teacher(let c): c.encode(into: &w)
        case .teacherReply(let r): r.encode(into: &w)
        case .watchReport(let r): r.encode(into: &w)
        }
        return w.bytes
    }

    /// Decodes a whole (reassembled) payload of `type`. Never traps; every malformed payload is
    /// a ``ControlMessageError`` with the offset and the bytes.
    package static func decode(type: ControlType, payload: ArraySlice<UInt8>) throws(ControlMessageError) -> ControlMessage {
        var r = ByteReader(payload)
        let message: ControlMessage
        switch type {
        case .hello:
            message = .hello(Hello(peerID: try r.u64(), displayName: try r.str8(), pairingCode: try r.str8(), session: try r.str8(),
                                   nonce: try r.optionalNonce()))
        case .accept:
            message = .accept(Accept(peerID: try r.u64(), displayName: try r.str8(),
                                     failsafeMilliseconds: try r.u16(), rateHertz: try r.u16(), echo: try r.optionalNonce()))
        case .deny:
            let at = r.offset - payload.startIndex
            let raw = try r.u8()
            guard let reason = Deny.Reason(rawValue: raw) else {
                throw ControlMessageError(.badField, at: at, bytes: Array(payload))
            }
            message = .deny(Deny(reason: reason, text: try r.str8(), echo: try r.optionalNonce()))
        case .bye:
            message = .bye
        case .ping:
            message = .ping(id: try r.u32(), sentNanos: try r.u64())
        case .pong:
            message = .pong(id: try r.u32(), sentNanos: try r.u64())
        case .data:
            let channel = try r.u8()
            message = .data(channel: channel, bytes: Array(try r.take(r.remaining)))
        case .datagram:
            let channel = try r.u8()
            guard r.remaining <= datagramLimit else {
                throw ControlMessageError(.tooLarge, at: r.offset - payload.startIndex, bytes: Array(payload.prefix(64)))
            }
            message = .datagram(channel: channel, bytes: Array(try r.take(r.remaining)))
        case .ack:
            message = .ack(selective: try r.u64())
        case .stopAll:
            let at = r.offset - payload.startIndex
            guard let action = StopAll.Action(rawValue: try r.u8()) else {
                throw ControlMessageError(.badField, at: at, bytes: Array(payload))
            }
            message = .stopAll(StopAll(action: action, unixMillis: try r.u64(), nonce: try r.u64(),
                                       session: try r.str8(), target: try r.str8(), mac: Array(try r.take(16))))
        case .stopAllReply:
            let nonce = try r.u64()
            let at = r.offset - payload.startIndex
            guard let outcome = StopAllReply.Outcome(rawValue: try r.u8()) else {
                throw ControlMessageError(.badField, at: at, bytes: Array(payload))
            }
            let name = try r.str8(), text = try r.str8()
            message = .stopAllReply(StopAllReply(nonce: nonce, outcome: outcome, displayName: name, text: text,
                                                 mac: r.remaining == 16 ? Array(try r.take(16)) : []))
        case .challenge:
            message = .challenge(nonce: Array(try r.take(nonceSize)), echo: try r.optionalNonce())
        case .proof:
            message = .proof(nonce: Array(try r.take(nonceSize)), mac: Array(try r.take(proofSize)))
        case .sealed:
            // An envelope is opened by SealedEnvelope, never decoded as a message.
            throw ControlMessageError(.badField, at: 0, bytes: Array(payload))
        case .robotState:
            return .robotState(try RobotReport.decode(payload))
        case .robotSensors:
            return .robotSensors(try RobotSensors.decode(payload))
        case .teacher:
            message = .teacher(try TeacherCommand.decode(&r, payload: payload))
        case .teacherReply:
            message = .teacherReply(try TeacherReply.decode(&r, payload: payload))
        case .watchReport:
            message = .watchReport(try WatchReport.decode(&r, payload: payload))
        }
        try r.expectEnd()
        return message
    }
}

/// A control datagram as it arrived: header plus the payload of this one fragment.
package struct ControlDatagram: Hashable, Sendable {
    package var header: ControlHeader
    package var payload: ArraySlice<UInt8>

    package init(header: ControlHeader, payload: ArraySlice<UInt8>) {
        self.header = header
        self.payload = payload
    }

    package func encode() -> [UInt8] {
        var w = ByteWriter()
        header.write(into: &w)
        w.raw(payload)
        return w.bytes
    }

    /// Parses the header of one datagram. Checks magic, version, type, length and fragment
    /// fields; the payload itself is decoded only once a message is whole.
    package static func decode(_ datagram: [UInt8]) throws(ControlMessageError) -> ControlDatagram {
        guard datagram.count >= ControlHeader.size else { throw ControlMessageError(.tooShort, at: 0, bytes: datagram) }
        guard datagram.count <= ControlHeader.maxDatagram else { throw ControlMessageError(.tooLong, at: 0, bytes: datagram) }
        guard ControlHeader.looksLikeControl(datagram) else { throw ControlMessageError(.badMagic, at: 0, bytes: datagram) }
        let extended = datagram[2] == ControlHeader.extendedVersion
        guard datagram[2] == ControlHeader.version || extended else {
            throw ControlMessageError(.unsupportedVersion, at: 2, bytes: datagram)
        }
        guard !extended || datagram.count >= ControlHeader.extendedSize else { throw ControlMessageError(.tooShort, at: 0, bytes: datagram) }
        guard let type = ControlType(rawValue: datagram[3]) else { throw ControlMessageError(.unknownType, at: 3, bytes: datagram) }
        var r = ByteReader(datagram[4...])
        let connection = try r.u32(), sequence = try r.u32(), ack = try r.u32()
        let index = try r.u16(), count = try r.u16()
        let connectionID = extended ? try r.u64() : 0
        guard connection != 0 else { throw ControlMessageError(.badField, at: 4, bytes: datagram) }
        guard !extended || connectionID != 0 else { throw ControlMessageError(.badField, at: 20, bytes: datagram) }
        guard (sequence == 0) != type.isReliable else { throw ControlMessageError(.badField, at: 8, bytes: datagram) }
        guard count >= 1, index < count, count <= ControlHeader.maxFragments,
              type == .data || count == 1 else {
            throw ControlMessageError(.badField, at: 16, bytes: datagram)
        }
        let header = ControlHeader(type: type, connection: connection, sequence: sequence, ack: ack,
                                   fragmentIndex: index, fragmentCount: count, connectionID: connectionID)
        return ControlDatagram(header: header, payload: datagram[header.encodedSize...])
    }
}

/// Why bytes are not a valid control message, where, and the bytes themselves (first 64).
package struct ControlMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: String, Hashable, Sendable {
        case tooShort, tooLong, badMagic, unsupportedVersion, unknownType, badField, truncated, trailingBytes, badText, tooLarge
    }
    package let reason: Reason
    package let offset: Int
    package let bytes: [UInt8]
    package let length: Int

    package init(_ reason: Reason, at offset: Int, bytes: [UInt8]) {
        self.reason = reason
        self.offset = offset
        self.length = bytes.count
        self.bytes = Array(bytes.prefix(64))
    }

    package var description: String {
        "control message refused: \(reason.rawValue) at byte \(offset) of \(length) (\(Hex.string(bytes))\(length > bytes.count ? "…" : ""))"
    }
}
