import BoardProtocol
import MIDIFraming

/// The programland kit's firmware, byte for byte, as a value type: feed it the bytes the host
/// sends, take the bytes it answers.
///
/// Text framing (the WebUSB/CDC build), per received character: store it and echo it at once; at
/// LF, CR or NUL print `\r\n`, run the command, print its reply, print the prompt `\r\n>`; a line
/// that reaches 256 characters without a terminator is discarded and the prompt printed. The
/// prompt is also printed at boot. Quirks kept: fixed-column parsing, non-hex digits read as 0,
/// writes past the memory map dropped, reads truncated at its end, CRLF = two lines (the second,
/// empty, draws `error:undefined cmd or fmt.`).
///
/// MIDI framing (the iOS build): the host's bytes go through the Linux kernel's USB-MIDI
/// packetizer and then the firmware's `recv_midi` (a SysEx body is one line, no per-character
/// echo); when a SysEx completes, the whole line plus `\r\n` is echoed, then the reply and the
/// prompt, all as Note-On pairs `90 c1 c2`. Quirks kept: a one-byte body never completes (its F7
/// is stored as data, and the next SysEx is glued onto it); `F0 F7` is the line `"\xF7"`; a
/// real-time byte inside a SysEx is stored as data.
///
/// The loop: random, timer, temperature, humidity, sensors 1–4 and the switch read as
/// ``Inputs`` (0 by default) and are restored after every command, as the firmware's loop
/// overwrites them; ``loop(at:)`` (called by a host with the time since boot) also draws a new
/// random byte and advances the timer. The buzzer is set only by a write that touches 0x09 or
/// 0x0a (``buzzer``). Not modelled: bytecode programs (EXEC_MODE is stored, nothing runs). Where the firmware overflows a buffer (a `G` reply over 85 bytes, a SysEx
/// body over 256 bytes), the simulator answers in full or drops the excess instead.
package struct SimulatedBoard: Sendable {
    package enum Framing: String, Sendable, Hashable {
        case text, midi
    }

    /// What the board's own sensors read (the firmware overwrites these addresses every loop).
    package struct Inputs: Sendable, Hashable {
        package var random: UInt8 = 0
        package var timer: UInt8 = 0
        package var temperature: UInt8 = 0
        package var humidity: UInt8 = 0
        package var sensors: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        package var switchPressed = false
        package init() {}

        package static func == (a: Inputs, b: Inputs) -> Bool {
            a.random == b.random && a.timer == b.timer && a.temperature == b.temperature && a.humidity == b.humidity
                && a.sensors == b.sensors && a.switchPressed == b.switchPressed
        }
        package func hash(into h: inout Hasher) {
            h.combine(random); h.combine(timer); h.combine(temperature); h.combine(humidity)
            h.combine(sensors.0); h.combine(sensors.1); h.combine(sensors.2); h.combine(sensors.3)
            h.combine(switchPressed)
        }
    }

    /// One line the board took (a command, an empty line, or a discarded overlong line).
    package struct Line: Sendable, Hashable {
        /// As received: text framing includes the terminator; MIDI framing is the SysEx body.
        package let bytes: [UInt8]
        /// What the firmware made of it; nil for an undefined command or a discarded line.
        package let command: BoardCommand?
        /// The line reached 256 characters without a terminator and was dropped.
        package let discarded: Bool
        /// The memory map changed.
        package let changedMap: Bool

        /// The line without a trailing terminator, for traces.
        package var text: [UInt8] {
            var b = bytes
            if let last = b.last, BoardCommand.isTerminator(last) { b.removeLast() }
            return b
        }
    }

    /// Firmware constants.
    package static let eepromSize = 1024
    package static let receiveBufferLength = 256
    package static let prompt: [UInt8] = BoardReplyDecoder.prompt
    static let productID: UInt8 = 1
    static let version: UInt8 = 1

    /// Fixed firmware addresses (the published firmware's `#define`s).
    package typealias Address = MemoryMapProfile.Address

    /// A never-written EEPROM reads 0xff: a new board boots with LEDs, buzzer and variables at 0xff.
    package static let erasedEEPROM = [UInt8](repeating: 0xFF, count: eepromSize)

    /// What the buzzer does: the firmware calls `tone()` only when a write touched the tone or
    /// time byte (0x09/0x0a), with the values then in the map.
    package struct Buzzer: Sendable, Hashable {
        /// The tone byte at the last write: 0 (or anything past the 37-note table) is silence.
        package var tone: UInt8 = 0
        /// How long it sounds; 0 = until the next write (Arduino's `tone()` without a duration).
        package var duration: Duration = .zero
        /// ``SimulatedBoard/now`` when it was written.
        package var started: Duration = .zero
        /// Buzzer writes since boot.
        package var writes = 0

        /// The note, 1…37 = C3…C6, or nil for silence.
        package var note: UInt8? { (1...37).contains(tone) ? tone : nil }
    }

    package let profile: MemoryMapProfile
    package let framing: Framing
    package private(set) var memoryMap: [UInt8]
    package private(set) var eeprom: [UInt8]
    package var inputs = Inputs()
    /// Lines taken since boot.
    package private(set) var linesTaken = 0
    /// Time since boot, as of the last ``loop(at:)``.
    package private(set) var now: Duration = .zero
    package private(set) var buzzer = Buzzer()
    /// A faulty firmware, for tests: writes to these addresses are acknowledged and dropped.
    package var dropWrites: Set<UInt8> = []
    private var randomState: UInt64 = 0x9E37_79B9_7F4A_7C15

    private var receiveBuffer: [UInt8] = []
    private var output: [UInt8] = []
    private var packetizer = USBMIDIPacketizer()
    private var sysExRemain = false

    /// Powers the board on: the memory map is loaded from EEPROM[0..<size], product/version/mode
    /// and the program counter (= the map size, where programs start) are set, and the boot
    /// prompt is queued. A fresh `eeprom` is all zero here; pass ``erasedEEPROM`` for a new
    /// board as it comes (every byte 0xFF).
    package init(profile: MemoryMapProfile = .kit, framing: Framing = .text, eeprom: [UInt8]? = nil) {
        self.profile = profile
        self.framing = framing
        var rom = eeprom ?? []
        rom = Array(rom.prefix(Self.eepromSize))
        rom += [UInt8](repeating: 0, count: Self.eepromSize - rom.count)
        self.eeprom = rom
        memoryMap = Array(rom.prefix(profile.size))
        memoryMap += [UInt8](repeating: 0, count: max(0, profile.size - memoryMap.count))
        setIfInside(Address.productID, Self.productID)
        setIfInside(Address.versionID, Self.version)
        setIfInside(Address.execMode, 0)
        setIfInside(Address.sequenceCounterHigh, UInt8(truncatingIfNeeded: profile.size >> 8))
        setIfInside(Address.sequenceCounterLow, UInt8(truncatingIfNeeded: profile.size))
        applyInputs()
        send(Self.prompt)
    }

    /// Bytes the board has printed and not yet taken.
    package var hasOutput: Bool { !output.isEmpty }

    package mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }

    /// Feeds bytes from the host; returns the lines they completed (output accumulates for
    /// ``takeOutput()``).
    @discardableResult
    package mutating func receive(_ bytes: some Sequence<UInt8>) -> [Line] {
        var lines: [Line] = []
        switch framing {
        case .text:
            for b in bytes { if let line = receiveCharacter(b) { lines.append(line) } }
        case .midi:
            var packets: [USBMIDIPacket] = []
            for b in bytes {
                packets.removeAll(keepingCapacity: true)
                packetizer.push(b, into: &packets)
                for p in packets { if let line = receivePacket(p) { lines.append(line) } }
            }
        }
        return lines
    }

    // MARK: Text framing (loop() of the non-iOS build)

    private mutating func receiveCharacter(_ chr: UInt8) -> Line? {
        receiveBuffer.append(chr)
        output.append(chr)
        if BoardCommand.isTerminator(chr) {
            output += [0x0D, 0x0A]
            let line = execute(receiveBuffer)
            resetReceiveBuffer()
            return line
        }
        if receiveBuffer.count >= Self.receiveBufferLength {
            let dropped = receiveBuffer
            resetReceiveBuffer()
            linesTaken += 1
            return Line(bytes: dropped, command: nil, discarded: true, changedMap: false)
        }
        return nil
    }

    // MARK: MIDI framing (recv_midi() of the iOS build)

    private mutating func receivePacket(_ p: USBMIDIPacket) -> Line? {
        guard p.header != 0 else { return nil }
        if sysExRemain {
            if p.byte1 != 0xF7 && p.byte2 != 0xF7 && p.byte3 != 0xF7 {
                store([p.byte1, p.byte2, p.byte3])
                return nil
            } else if p.byte1 != 0xF7 && p.byte2 != 0xF7 && p.byte3 == 0xF7 {
                store([p.byte1, p.byte2])
            } else if p.byte1 != 0xF7 && p.byte2 == 0xF7 {
                store([p.byte1])
            }
            sysExRemain = false
            return completeSysEx()
        } else if p.byte1 == 0xF0 {
            receiveBuffer.removeAll(keepingCapacity: true)
            if p.byte2 != 0xF7 {
                store([p.byte2, p.byte3])
                sysExRemain = true
                return nil
            }
            store([p.byte2])
            return completeSysEx()
        }
        return nil
    }

    /// The firmware has no bound here (it overflows); the simulator drops bytes past 256.
    private mutating func store(_ bytes: [UInt8]) {
        for b in bytes where receiveBuffer.count < Self.receiveBufferLength { receiveBuffer.append(b) }
    }

    private mutating func completeSysEx() -> Line {
        // midi_send(String(rbuff) + "\r\n"): the C string stops at the first NUL.
        send(receiveBuffer.prefix { $0 != 0 } + [0x0D, 0x0A])
        let line = execute(receiveBuffer)
        resetReceiveBuffer()
        return line
    }

    // MARK: parse_cmd()

    private mutating func execute(_ line: [UInt8]) -> Line {
        linesTaken += 1
        let before = memoryMap
        let command = BoardCommand.interpret(firmwareLine: line)
        switch command {
        case let .write(address, bytes):
            var a = Int(address)
            var touchedBuzzer = false
            for b in bytes {
                if a >= profile.size { break }
                if !dropWrites.contains(UInt8(a)) { memoryMap[a] = b }
                if a == Int(profile.buzzerTone) || a == Int(profile.buzzerTime) { touchedBuzzer = true }
                a += 1
            }
            if touchedBuzzer {
                let tone = memoryMap[Int(profile.buzzerTone)], time = memoryMap[Int(profile.buzzerTime)]
                buzzer = Buzzer(tone: tone, duration: .milliseconds(Int(time) * 16), started: now, writes: buzzer.writes + 1)
            }
        case let .read(address, count):
            var reply: [UInt8] = []
            for i in Int(address)..<(Int(address) + Int(count)) {
                if i >= profile.size { break }
                reply += Array((ByteText.hexPair(memoryMap[i]) + " ").utf8)
            }
            send(reply)
        case let .eepromWrite(address, bytes):
            var a = Int(address)
            for b in bytes {
                if a >= Self.eepromSize { break }
                eeprom[a] = b
                a += 1
            }
        case let .eepromRead(address, count):
            var reply: [UInt8] = []
            for i in Int(address)..<(Int(address) + Int(count)) {
                if i >= Self.eepromSize { break }
                reply += Array((ByteText.hexPair(eeprom[i]) + " ").utf8)
            }
            send(reply)
        case .flash:
            eeprom.replaceSubrange(0..<profile.size, with: memoryMap)
            send(BoardResponse.flashedBody)
        case nil:
            send(BoardResponse.undefinedCommandBody)
        }
        applyInputs()
        return Line(bytes: line, command: command, discarded: false, changedMap: memoryMap != before)
    }

    /// rbuff_reset(): clear the line and print the prompt.
    private mutating func resetReceiveBuffer() {
        receiveBuffer.removeAll(keepingCapacity: true)
        send(Self.prompt)
    }

    /// Serial.write in the text build, midi_send in the MIDI build.
    private mutating func send(_ text: some Collection<UInt8>) {
        switch framing {
        case .text: output += text
        case .midi: output += NotePairs.encode(text)
        }
    }

    /// One pass of the firmware's `loop()` at `elapsed` since boot: a new random byte, the
    /// timer (whole seconds, wrapping at 256), and the switch and sensors read again.
    package mutating func loop(at elapsed: Duration) {
        now = max(now, elapsed)
        randomState ^= randomState << 13
        randomState ^= randomState >> 7
        randomState ^= randomState << 17
        inputs.random = UInt8(randomState % 255)   // random(255): 0…254
        inputs.timer = UInt8(truncatingIfNeeded: now.components.seconds)
        applyInputs()
    }

    /// True while the buzzer sounds at ``now``.
    package var isBuzzing: Bool {
        guard buzzer.note != nil else { return false }
        return buzzer.duration == .zero || now < buzzer.started + buzzer.duration
    }

    /// The loop's sensor refresh, except where the profile put one of its own roles.
    private mutating func applyInputs() {
        let roles = Set([profile.motorLeft, profile.motorRight].compactMap { $0 }
                        + [profile.led1, profile.led2, profile.buzzerTone, profile.buzzerTime])
        func refresh(_ address: UInt8, _ value: UInt8) {
            if !roles.contains(address) { setIfInside(address, value) }
        }
        refresh(Address.random, inputs.random)
        refresh(Address.timer, inputs.timer)
        refresh(Address.temperature, inputs.temperature)
        refresh(Address.humidity, inputs.humidity)
        refresh(Address.sensor1, inputs.sensors.0)
        refresh(Address.sensor1 + 1, inputs.sensors.1)
        refresh(Address.sensor1 + 2, inputs.sensors.2)
        refresh(Address.sensor1 + 3, inputs.sensors.3)
        refresh(Address.switchValue, inputs.switchPressed ? 1 : 0)
    }

    private mutating func setIfInside(_ address: UInt8, _ value: UInt8) {
        if Int(address) < memoryMap.count { memoryMap[Int(address)] = value }
    }
}

extension SimulatedBoard {
    /// The motor speeds as signed values (nil without motors, or when they are outside the map).
    package var motors: (left: Int8, right: Int8)? {
        guard let l = profile.motorLeft, let r = profile.motorRight,
              Int(l) < memoryMap.count, Int(r) < memoryMap.count else { return nil }
        return (Int8(bitPattern: memoryMap[Int(l)]), Int8(bitPattern: memoryMap[Int(r)]))
    }

    /// A byte of the map, or nil outside it.
    package func value(at address: UInt8) -> UInt8? {
        Int(address) < memoryMap.count ? memoryMap[Int(address)] : nil
    }
}
