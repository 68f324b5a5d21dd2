import BoardProtocol
import ControlPlane
import ControlWire
import Controller
import Discovery
import Gamepad
import MIDIControl
import MIDIFraming
import Receiver
import SystemIO
import RemoteWire

extension Harness {
    /// Any 8 bytes either decode to a state inside the wire's limits, or are refused for a
    /// non-finite angle; a decoded state survives encode → decode unchanged.
    static func statePacket(_ bytes: [UInt8]) {
        do {
            let state = try StatePacket.decode(bytes)
            precondition(state.angle.isFinite && state.angle.magnitude <= ControllerState.maxAngle)
            precondition(state.buttons.isSubset(of: .defined))
            precondition((try? StatePacket.decode(StatePacket.encode(state))) == state)
        } catch {
            precondition(bytes.count != StatePacket.size || error.reason == .angleNotFinite)
        }
    }

    /// A header that parses re-encodes to the same bytes; a whole message that decodes survives
    /// encode → decode unchanged; no decoded string holds a character a terminal or a log would
    /// obey (ESC, newline, a bidi override: DisplayText) or is longer than a str8.
    static func controlDatagram(_ bytes: [UInt8]) {
        guard let datagram = try? ControlDatagram.decode(bytes) else { return }
        precondition(datagram.encode() == bytes)
        guard datagram.header.fragmentCount == 1,
              let message = try? ControlMessage.decode(type: datagram.header.type, payload: datagram.payload) else { return }
        let again = try? ControlMessage.decode(type: message.type, payload: message.encodePayload()[...])
        precondition(again == message)
        let texts: [WireText] = switch message {
        case .hello(let h): [h.displayName, h.pairingCode, h.session]
        case .accept(let a): [a.displayName]
        case .deny(let d): [d.text]
        case .stopAll(let s): [s.session, s.target]
        case .stopAllReply(let r): [r.displayName, r.text]
        case .robotState(let r): [r.board, r.headline]
        case .teacher(let c): [c.session, c.target, c.argument]
        case .teacherReply(let r): [r.displayName, r.text]
        case .watchReport(let r): [r.name, r.driver, r.lockedTo, r.board, r.transport, r.version]
        default: []
        }
        // The lines a status line, a JSON log and a page make of it.
        let lines: [String] = switch message {
        case .watchReport(let r): r.sensors.map { [RobotSensors(sample: 0, block: $0).json] } ?? []
        case .robotSensors(let s): [s.compact, s.json]
        default: []
        }
        // Decoded exactly (§7.9.1): the 11 bytes it came in, no more, no fewer.
        if case .robotSensors(let s) = message {
            precondition(datagram.payload.count == RobotSensors.payloadSize && s.encodePayload() == Array(datagram.payload))
        }
        // A robot-id target (Protocol.md §7.6.1) is exactly its id's target: one spelling only.
        if case .stopAll(let s) = message, let id = RobotID(target: s.target.text) { precondition(id.target == s.target.text) }
        if case .stopAllReply(let r) = message, let id = r.robotID { precondition(r.outcome != .refused && id.target == r.text.text) }
        // WireText's rule, whatever the bytes: nothing to escape, a str8 long, and a fixed point
        // (shown, then sent on, it keeps its bytes).
        for text in texts {
            precondition(WireText(text.text) == text && text.text.utf8.count <= WireText.maximumBytes)
        }
        for text in texts.map(\.text) + lines {
            precondition(!text.unicodeScalars.contains(where: DisplayText.needsEscape))
        }
    }

    /// Datagrams into the authenticated mode's envelope opener (Protocol.md §8.3), under the
    /// vectors' keys: nothing that was not sealed with them opens, a refused one never moves the
    /// replay window, and no counter opens twice. The input's records are the datagrams; a record
    /// starting with 0xFF is replaced by a genuine envelope (counter = its second byte) so that
    /// the fuzzer can mix real ones, replays and mutations.
    static func sealedEnvelope(_ bytes: [UInt8]) {
        let keys = SecretHandshake.keys(secret: RobotSecret(bytes: Array(0..<12)), receiverNonce: Array(0x10..<0x20),
                                        controllerNonce: Array(0x20..<0x30), connectionID: 0x1122_3344_5566_7788)
        var window = ReplayWindow()
        var opened: Set<UInt64> = []
        for record in Records(bytes) {
            var datagram = Array(record)
            if datagram.first == 0xFF {
                let counter = UInt64(datagram.count > 1 ? datagram[1] : 1) + 1
                datagram = SealedEnvelope.seal(Array(datagram.dropFirst(2).prefix(16)), connectionID: 0x1122_3344_5566_7788,
                                               instance: 1, counter: counter, key: keys.controllerToReceiver)
            }
            let before = window
            switch SealedEnvelope.open(datagram, key: keys.controllerToReceiver, window: &window) {
            case .success(let e):
                precondition(opened.insert(e.counter).inserted, "counter \(e.counter) opened twice")
                precondition(e.inner.count == datagram.count - SealedEnvelope.overhead)
            case .failure:
                precondition(window == before, "a refused envelope moved the window")
            }
        }
    }

    /// A stream of datagrams into one reliable channel: whatever arrives, in whatever order.
    static func reliableFragments(_ bytes: [UInt8]) {
        var channel = ReliableChannel(connection: 0x0102_0304)
        var now = ContinuousClock.now
        for record in Records(bytes) {
            now = now.advanced(by: .milliseconds(5))
            if let datagram = try? ControlDatagram.decode(Array(record)) {
                _ = channel.receive(datagram, now: now)
            }
            _ = channel.poll(now: now)
        }
    }

    /// Datagrams from eight sources into the receiver's engine, with the stock or the motors
    /// mapping (the first byte chooses): every write it asks of the board stays inside that
    /// profile's memory map — the stock firmware drops writes past 0x21 without a word.
    static func receiverDatagrams(_ bytes: [UInt8]) {
        let mapping = Mapping.default(for: (bytes.first ?? 0) & 1 == 0 ? .stock : .motors)
        let mapSize = mapping.profile.profile.size
        var engine = ReceiverEngine<UInt8>(mapping: mapping, policy: .first, timeout: .milliseconds(250))
        var now = Tick.now()
        func check(_ step: ReceiverEngine<UInt8>.Step) {
            for (address, _) in step.write ?? [:] {
                precondition(Int(address) < mapSize, "write past the \(mapping.profile) map at \(address)")
            }
        }
        check(engine.start())
        var source: UInt8 = 0
        for record in Records(Array(bytes.dropFirst())) {
            now = now + Int64(record.first ?? 0) % 64 * 1_000_000
            source = (source &+ (record.last ?? 0)) & 7
            check(engine.datagram(record, length: record.count, from: source, at: now))
            precondition(abs(engine.wheels.left) <= 127 && abs(engine.wheels.right) <= 127)
        }
        for (address, _) in engine.shutdown() { precondition(Int(address) < mapSize) }
    }

    /// Board output in chunks of any size: the decoder never holds more than its capacity once
    /// it has said there is nothing more to decode.
    static func boardReplies(_ bytes: [UInt8]) {
        var decoder = BoardReplyDecoder(capacity: 256)
        decoder.expect(Array("W 22 c040".utf8))
        for record in Records(bytes) {
            decoder.append(record)
            while true {
                do {
                    guard try decoder.decode() != nil else { break }
                    decoder.expect(Array("R 00 04".utf8))
                } catch {
                    continue
                }
            }
            precondition(decoder.pending.count <= decoder.capacity)
        }
    }

    /// USB-MIDI packets and a byte stream from a MIDI board.
    static func midiNotePairs(_ bytes: [UInt8]) {
        var decoder = NotePairDecoder()
        _ = decoder.decode(bytes)
        var packets = bytes[...]
        while packets.count >= 4 {
            let p = Array(packets.prefix(4))
            packets = packets.dropFirst(4)
            _ = USBMIDIPacket(header: p[0], p[1], p[2], p[3]).midiBytes
        }
    }

    /// A MIDI keyboard's bytes in reads of any size (records), 7 ms apart: the decoder gives the
    /// same messages whole and in pieces, every message is in range and re-encodes to itself, and
    /// the session's output always fits the wire; unplugging is neutral.
    static func midiStream(_ bytes: [UInt8]) {
        var whole = MIDIStreamDecoder()
        let all = whole.decode(bytes)
        var pieces = MIDIStreamDecoder()
        var session = MIDISession(mapping: .standard)
        var now = ContinuousClock.now
        _ = session.handle(.connected("fuzz"), at: now)
        var messages: [MIDIMessage] = []
        for record in Records(bytes) {
            now = now.advanced(by: .milliseconds(7))
            if let due = session.nextDeadline, due <= now { _ = session.handle(.tick, at: now) }
            for message in pieces.decode(record) {
                messages.append(message)
                _ = session.handle(.message(message), at: now)
                let out = session.output
                precondition(out.angle.isFinite && out.angle.magnitude <= ControllerState.maxAngle && out.buttons.isSubset(of: .defined))
            }
        }
        // Records drop their length bytes, so only the whole-stream decode is compared to itself.
        var again = MIDIStreamDecoder()
        precondition(again.decode(all.flatMap(\.bytes)) == all)
        for message in all + messages {
            precondition((message.channel ?? 0) <= 15)
            if case .pitchBend(_, let v) = message { precondition(v <= PitchBend.maximum) }
            var single = MIDIStreamDecoder()
            precondition(single.decode(message.bytes) == [message])
        }
        _ = session.handle(.disconnected("fuzz: unplugged"), at: now)
        precondition(session.output == .neutral)
    }

    static func midiConfig(_ bytes: [UInt8]) {
        guard let config = try? MIDIConfig.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz") else { return }
        let m = config.mapping
        precondition(m.fullLockAngle > 0 && m.fullLockAngle <= ControllerState.maxAngle && (0..<1).contains(m.deadzone))
    }

    static func mapping(_ bytes: [UInt8], json: Bool) {
        _ = try? MappingFile.parse(String(decoding: bytes, as: UTF8.self), json: json, file: "fuzz")
    }

    static func gamepadConfig(_ bytes: [UInt8]) {
        _ = try? GamepadConfig.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz")
    }

    /// A script that parses has times that never decrease and angles inside the wire's limits.
    static func script(_ bytes: [UInt8]) {
        guard let script = try? Script.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz") else { return }
        for (a, b) in zip(script.steps, script.steps.dropFirst()) { precondition(a.at <= b.at) }
        for step in script.steps { precondition(step.state.angle.magnitude <= ControllerState.maxAngle) }
    }

    static func stateLine(_ bytes: [UInt8]) {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if let state = try? StateLine.parse(line) {
                precondition(state.angle.isFinite && state.angle.magnitude <= ControllerState.maxAngle)
            }
        }
    }

    /// Terminal input in reads of any size: after every read is drained, what is kept for an
    /// unfinished escape sequence stays bounded.
    static func terminalInput(_ bytes: [UInt8]) {
        var decoder = TerminalInputDecoder()
        for record in Records(bytes) {
            decoder.feed(record)
            while decoder.next() != nil {}
            precondition(decoder.pending <= TerminalInputDecoder.maximumSequence)
        }
    }

    /// A TXT record that decodes re-encodes to bytes that decode to the same record; read as a
    /// receiver's announcement, its texts for people hold nothing a terminal would obey
    /// (DisplayText), and a robot id is one that reads back from its own text.
    static func txtRecord(_ bytes: [UInt8]) {
        guard let record = TXTRecord.decode(bytes) else { return }
        precondition(TXTRecord.decode(record.encoded) == record)
        guard case .usable(let announcement, _) = ReceiverAnnouncement.read(record) else { return }
        for text in [announcement.displayName, announcement.peer] {
            precondition(!text.unicodeScalars.contains(where: DisplayText.needsEscape))
        }
        if let robot = announcement.robot { precondition(RobotID(robot.text) == robot && robot.value != 0) }
    }
}
