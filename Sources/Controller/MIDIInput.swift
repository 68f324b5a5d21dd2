import MIDIControl
import MIDIFraming

/// `--input midi…` / `midi-serial:…`: a MIDI keyboard or pad controller as an ``InputSource``.
///
/// Bytes from the device (sequencer events decoded back to bytes, rawmidi, or a tty stream) go
/// through one ``MIDIStreamDecoder`` into a ``MIDISession``, which decides what to send. The
/// device must open at start (else one line, exit 3: a wrong name fails fast). Later, an
/// unplugged device is the neutral state at once; a tty, rawmidi device or sequencer port is
/// then tried again every ``reconnectInterval`` and drives again after a neutral input, while
/// a pipe or file that ends ends the input (neutral ×3, exit 0), as stdin does.
package final class MIDIInput: InputSource {
    package static let reconnectInterval: Duration = .seconds(1)

    let spec: MIDIDeviceSpec
    private var device: MIDIDevice?
    private var decoder = MIDIStreamDecoder()
    private var session: MIDISession
    private var reconnectAt: ContinuousClock.Instant?
    private var ended = false
    package private(set) var name: String

    /// Reads the `[midi]` table of `configPath`, then opens the device, before anything is sent.
    /// Throws ``MIDIConfigError`` (the CLI: exit 2) or ``MIDIDeviceError`` (exit 3).
    package convenience init(spec: MIDIDeviceSpec, configPath: String?) throws {
        let config = try configPath.map { path throws(MIDIConfigError) in try MIDIConfig.load(path: path) } ?? MIDIConfig()
        self.init(spec: spec, mapping: config.mapping)
        device = try MIDIDevice.open(spec)
    }

    package init(spec: MIDIDeviceSpec, mapping: MIDIMapping) {
        self.spec = spec
        session = MIDISession(mapping: mapping)
        name = spec.description
    }

    package var descriptor: Int32? { ended ? nil : device?.descriptor }

    package var nextDeadline: ContinuousClock.Instant? {
        guard !ended else { return nil }
        return [session.nextDeadline, reconnectAt].compactMap { $0 }.min()
    }

    package func start(now: ContinuousClock.Instant) throws -> [InputEvent] {
        let opened = try device ?? MIDIDevice.open(spec)
        device = opened
        return [.state(session.output)] + take(session.handle(.connected(opened.name), at: now))
    }

    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard let device, !ended else { return [] }
        switch device.read() {
        case .nothing:
            return []
        case .bytes(let bytes):
            var events: [InputEvent] = []
            for byte in bytes {
                if let message = decoder.decode(byte) { events += take(session.handle(.message(message), at: now)) }
            }
            return events
        case .overrun:
            return take(session.handle(.lost("\(device.name): MIDI events were dropped (the input queue overflowed)"), at: now))
        case .ended(var why):
            if decoder.isPartial { why += ", in the middle of a message" }
            device.close()
            self.device = nil
            decoder = MIDIStreamDecoder()
            var events = take(session.handle(.disconnected(why), at: now))
            if device.canReconnect {
                reconnectAt = now + Self.reconnectInterval
                events.append(.notice("waiting for \(spec) to come back (trying every second); Ctrl-C stops"))
            } else {
                ended = true
                events.append(.end(.endOfInput))
            }
            return events
        }
    }

    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        var events: [InputEvent] = []
        if let due = reconnectAt, now >= due {
            if let opened = try? MIDIDevice.open(spec) {
                device = opened
                reconnectAt = nil
                events += take(session.handle(.connected(opened.name), at: now))
            } else {
                reconnectAt = now + Self.reconnectInterval
            }
        }
        if let due = session.nextDeadline, now >= due {
            events += take(session.handle(.tick, at: now))
        }
        return events
    }

    package func close() {
        device?.close()
        device = nil
    }

    private func take(_ events: [MIDIEvent]) -> [InputEvent] {
        events.compactMap { event in
            switch event {
            case .state(let state): return .state(state)
            case .status(let status):
                name = status.description
                return nil
            case .notice(let line): return .notice(line)
            }
        }
    }
}
