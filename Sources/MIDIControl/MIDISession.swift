import MIDIFraming
import RemoteWire

/// The rules between a MIDI device and the wire: held keys, the chord window, the deadman,
/// all-notes-off, active sensing, and unplugging. A value fed with events and the time
/// (``handle(_:at:)``); it returns what to send, show and log. ``MIDIDevice`` and the
/// controller's input source do the I/O; tests drive it with a manual clock.
///
/// Contract:
/// - **No device** (unplugged, before the first connection): the output is the neutral state,
///   at once. Keys held when the device went away are forgotten (their note-offs never come).
/// - **A device (re)connects** (and after all-notes-off, lost events, an active-sensing
///   timeout): it drives only after a neutral input (no forward/backward, the tilt centred).
///   MIDI reports no held keys on connecting, so keys start released and a key struck after
///   connecting drives at once. A wheel is different: its first reading may come from a wheel
///   already held over. So while no centred tilt reading has come since the (re)connection, an
///   off-centre one holds the whole output at neutral until the tilt is centred and
///   forward/backward are released.
/// - **Keys**: a held key sets the buttons ``MIDIMapping/notes`` gives it, from note-on to
///   note-off (a note-on with velocity 0 is a note-off). Keys on other channels than
///   ``MIDIMapping/channel`` are ignored.
/// - **Chords**: a key that belongs to some chord opens (or joins) a window of
///   ``MIDIMapping/chordWindow`` from the first such key. The window closes at its end, or
///   earlier once no chord could still match. If the keys struck in it are exactly a chord's and
///   all still held, the chord's buttons are set until one of them is released; the others then
///   set nothing until they too are released. Otherwise each key still held acts on its own.
///   So such a key acts up to one window late, and a tap shorter than the window is lost; keys
///   in no chord act at once.
/// - **Deadman**, if configured: while it is not held, the output is neutral. Holding it again
///   drives at once (a deliberate hold-to-run).
/// - **All notes off / all sound off** (CC 123, 120, and the mode messages 124–127) and
///   **system reset** (FF): every key is released and the tilt centred: neutral at once.
///   Reset all controllers (CC 121) centres the tilt and lifts the deadman pedal.
/// - **Active sensing**: once the device has sent FE, silence for ``activeSensingTimeout``
///   means the cable is out: every key is released and the tilt centred, as MIDI 1.0 asks.
package struct MIDISession: Sendable {
    package enum Event: Hashable, Sendable {
        /// The device was opened; the text names it (`midi-serial:/dev/ttyUSB0`).
        case connected(String)
        /// The device went away; the text says what happened (`… end of stream`).
        case disconnected(String)
        case message(MIDIMessage)
        /// Messages were lost on the way (a sequencer queue overflow): a release may be among
        /// them, so every key is released, as on all-notes-off.
        case lost(String)
        /// Time passed (at or after ``nextDeadline``).
        case tick
    }

    /// MIDI 1.0: a receiver that has seen active sensing assumes the link lost after 300 ms
    /// without any byte.
    package static let activeSensingTimeout: Duration = .milliseconds(300)

    package let mapping: MIDIMapping
    package private(set) var output: ControllerState = .neutral
    package private(set) var status: MIDIStatus

    private enum Role: Hashable, Sendable {
        /// Waiting for its chord window to close.
        case pending
        /// Acting on its own (``MIDIMapping/notes``).
        case single
        /// Part of the active chord with this index.
        case chord(Int)
        /// Its chord ended: it sets nothing until released.
        case spent
    }
    private struct Key: Hashable, Sendable {
        var velocity: UInt8
        var role: Role
    }
    private struct Window: Hashable, Sendable {
        var closes: ContinuousClock.Instant
        var notes: [MIDINote]
    }

    private var device: String?
    private var lastDevice: String?
    private var keys: [MIDINote: Key] = [:]
    private var window: Window?
    /// −1…1, before the deadzone.
    private var tilt: Double = 0
    private var deadmanHeld = false
    /// Waiting for a neutral input before driving.
    private var needsNeutral = false
    /// A centred tilt reading (or a neutral input) has come since the last reset.
    private var tiltKnownCentred = false
    private var lastHeard: ContinuousClock.Instant?
    private var sensing = false

    package init(mapping: MIDIMapping) {
        self.mapping = mapping
        status = MIDIStatus(phase: .noDevice, device: nil, keys: [], tilt: 0, deadman: mapping.deadman)
    }

    /// When a ``Event/tick`` is due: the chord window's end, the active-sensing timeout.
    package var nextDeadline: ContinuousClock.Instant? {
        var due = window?.closes
        if sensing, device != nil, let last = lastHeard {
            let t = last + Self.activeSensingTimeout
            due = due.map { min($0, t) } ?? t
        }
        return due
    }

    package mutating func handle(_ event: Event, at now: ContinuousClock.Instant) -> [MIDIEvent] {
        var notices: [String] = []
        // A timeout that passed before this event counts first (a late tick must not let a
        // message arriving after the silence hide it).
        if sensing, device != nil, let last = lastHeard, now - last >= Self.activeSensingTimeout {
            notices.append("\(device ?? "MIDI"): no active sensing for \(Self.activeSensingTimeout): keys released (is the cable out?)")
            releaseEverything()
            sensing = false
        }
        if let w = window, now >= w.closes { closeWindow() }

        switch event {
        case .connected(let name):
            releaseEverything()
            deadmanHeld = false
            sensing = false
            device = name
            lastDevice = name
            lastHeard = now
            needsNeutral = false
            tiltKnownCentred = false
            notices.append("MIDI input connected: \(name)")
        case .disconnected(let why):
            if device != nil {
                notices.append("\(why): sending neutral")
                releaseEverything()
                deadmanHeld = false
                sensing = false
                device = nil
            }
        case .message(let message):
            guard device != nil else { break }
            lastHeard = now
            notices += take(message, at: now)
        case .lost(let why):
            if device != nil {
                notices.append("\(why): keys released")
                releaseEverything()
            }
        case .tick:
            break
        }
        return evaluateChanges(notices: notices)
    }

    // MARK: Messages

    private mutating func take(_ message: MIDIMessage, at now: ContinuousClock.Instant) -> [String] {
        if let wanted = mapping.channel, let channel = message.channel, channel != wanted { return [] }
        switch message {
        case .realTime(MIDIMessage.RealTime.activeSensing):
            sensing = true
        case .realTime(MIDIMessage.RealTime.systemReset):
            releaseEverything()
            deadmanHeld = false
            return ["system reset (FF): keys released"]
        case .realTime:
            break
        case .noteOn(_, let number, let velocity):
            let note = MIDINote(number)
            if mapping.deadman == .note(note) {
                deadmanHeld = true
                return []
            }
            if keys[note] != nil {
                keys[note]?.velocity = velocity     // struck again without a release: same key, new strength
                return []
            }
            let chordMember = mapping.isChordMember(note)
            keys[note] = Key(velocity: velocity, role: chordMember ? .pending : .single)
            if chordMember {
                if window == nil { window = Window(closes: now + mapping.chordWindow, notes: []) }
                window?.notes.append(note)
                let struck = Set(window?.notes ?? [])
                let couldGrow = mapping.chords.contains { $0.notes.count > struck.count && $0.notes.isSuperset(of: struck) }
                if !couldGrow { closeWindow() }
            }
        case .noteOff(_, let number, _):
            let note = MIDINote(number)
            if mapping.deadman == .note(note) {
                deadmanHeld = false
                return []
            }
            if let key = keys.removeValue(forKey: note), case .chord(let index) = key.role {
                for (other, k) in keys where k.role == .chord(index) { keys[other]?.role = .spent }
            }
        case .controlChange(_, let controller, let value):
            switch mapping.deadman {
            case .sustain where controller == MIDIMessage.Controller.sustain: deadmanHeld = value >= 64
            case .controller(let n) where n == controller: deadmanHeld = value >= 64
            default: break
            }
            if case .controller(let n) = mapping.tilt, n == controller {
                setTilt(MIDIMapping.fraction(controllerValue: value))
            }
            if controller == MIDIMessage.Controller.allNotesOff || controller == MIDIMessage.Controller.allSoundOff
                || MIDIMessage.Controller.modeChanges.contains(controller) {
                let had = !keys.isEmpty || tilt != 0
                releaseEverything()
                return had ? ["all notes off (CC \(controller)): keys released"] : []
            }
            if controller == MIDIMessage.Controller.resetAllControllers {
                tilt = 0
                tiltKnownCentred = false
                if mapping.deadman == .sustain { deadmanHeld = false }
                if case .controller = mapping.deadman { deadmanHeld = false }
            }
        case .pitchBend(_, let value):
            if mapping.tilt == .pitchBend { setTilt(PitchBend.normalized(value)) }
        case .polyPressure, .programChange, .channelPressure:
            break
        }
        return []
    }

    /// Forgets every key and the tilt; the next off-centre tilt reading must be centred first.
    private mutating func releaseEverything() {
        keys.removeAll()
        window = nil
        tilt = 0
        tiltKnownCentred = false
    }

    private mutating func setTilt(_ fraction: Double) {
        tilt = fraction
        if mapping.isCentred(fraction: fraction) {
            tiltKnownCentred = true
        } else if !tiltKnownCentred {
            needsNeutral = true
        }
    }

    private mutating func closeWindow() {
        guard let w = window else { return }
        window = nil
        let struck = Set(w.notes)
        if let index = mapping.chords.firstIndex(where: { $0.notes == struck }), struck.allSatisfy({ keys[$0] != nil }) {
            for note in struck { keys[note]?.role = .chord(index) }
        } else {
            for note in struck where keys[note]?.role == .pending { keys[note]?.role = .single }
        }
    }

    // MARK: Output

    private mutating func evaluateChanges(notices: [String]) -> [MIDIEvent] {
        let (newOutput, newStatus) = evaluate()
        var events: [MIDIEvent] = []
        if newOutput != output {
            output = newOutput
            events.append(.state(newOutput))
        }
        if newStatus != status {
            status = newStatus
            events.append(.status(newStatus))
        }
        return events + notices.map(MIDIEvent.notice)
    }

    private mutating func evaluate() -> (ControllerState, MIDIStatus) {
        guard let device else {
            return (.neutral, MIDIStatus(phase: .noDevice, device: lastDevice, keys: [], tilt: 0, deadman: mapping.deadman))
        }
        var buttons: Buttons = []
        var driveVelocity: UInt8 = 0
        var shown: [String] = []
        var chordsShown: Set<Int> = []
        for note in keys.keys.sorted() {
            guard let key = keys[note] else { continue }
            switch key.role {
            case .single:
                let b = mapping.notes[note] ?? []
                buttons.formUnion(b)
                if !b.isDisjoint(with: .drive) { driveVelocity = max(driveVelocity, key.velocity) }
                shown.append("\(note.name) \(b.isEmpty ? "—" : b.description)")
            case .pending:
                shown.append("\(note.name) …")
            case .spent:
                shown.append("\(note.name) —")
            case .chord(let index):
                guard chordsShown.insert(index).inserted else { continue }
                let chord = mapping.chords[index]
                buttons.formUnion(chord.buttons)
                if !chord.buttons.isDisjoint(with: .drive) {
                    let v = chord.notes.compactMap { keys[$0]?.velocity }.max() ?? 0
                    driveVelocity = max(driveVelocity, v)
                }
                shown.append("\(chord.name) \(chord.buttons)")
            }
        }
        let scale = mapping.velocityScalesTilt && driveVelocity > 0 ? Double(driveVelocity) / 127 : 1
        let state = ControllerState(angle: mapping.angle(fraction: tilt, scale: scale), buttons: buttons)
        func status(_ phase: MIDIStatus.Phase) -> MIDIStatus {
            MIDIStatus(phase: phase, device: device, keys: shown, tilt: state.angle, deadman: mapping.deadman)
        }
        if needsNeutral {
            guard state.isDriveNeutral && mapping.isCentred(fraction: tilt) else { return (.neutral, status(.waitingForNeutral)) }
            needsNeutral = false
            tiltKnownCentred = true
        }
        if mapping.deadman != nil && !deadmanHeld { return (.neutral, status(.deadmanNotHeld)) }
        return (state, status(.driving))
    }
}

/// What a MIDI input yields: the state to send, the status line, log lines.
package enum MIDIEvent: Hashable, Sendable {
    /// The state to put on the wire now (emitted only when it changed).
    case state(ControllerState)
    /// The new status (emitted only when it changed).
    case status(MIDIStatus)
    /// A line for the log: connected, unplugged, all notes off.
    case notice(String)
}

/// The MIDI input's part of the status line: the held keys by name and what they mean.
///
/// `midi-serial:/dev/ttyUSB0: C4 forward · C3+E3+G3 a+b · tilt +0.79`
package struct MIDIStatus: Hashable, Sendable, CustomStringConvertible {
    package enum Phase: Hashable, Sendable {
        case noDevice, waitingForNeutral, deadmanNotHeld, driving
    }
    package var phase: Phase
    /// The device, or the last one seen while none is connected.
    package var device: String?
    /// `C4 forward`, `C3+E3+G3 a+b`, `G3 …` (waiting for its chord window), `D5 —` (no meaning).
    package var keys: [String]
    /// The angle the keys and wheel ask for (before the deadman and neutral rules).
    package var tilt: Float
    package var deadman: MIDIMapping.Deadman?

    package var description: String {
        let name = device ?? "MIDI device"
        var parts: [String] = []
        switch phase {
        case .noDevice:
            return device == nil ? "no MIDI device yet" : "\(name) unplugged — sending neutral, waiting for it"
        case .waitingForNeutral:
            parts.append("release forward/backward and centre the wheel to start")
        case .deadmanNotHeld:
            parts.append("hold \(deadman.map { $0 == .sustain ? "the sustain pedal" : $0.description } ?? "the deadman") to drive")
        case .driving:
            break
        }
        parts += keys.isEmpty ? ["no keys held"] : keys
        if tilt != 0 {
            let hundredths = Int((Double(tilt.magnitude) * 100).rounded())
            parts.append("tilt \(tilt < 0 ? "-" : "+")\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)")
        }
        return "\(name): " + parts.joined(separator: " · ")
    }
}
