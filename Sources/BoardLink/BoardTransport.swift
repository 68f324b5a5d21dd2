#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ALSAMIDI
import BoardFirmware
import BoardProtocol
import SerialTTY
import Synchronization
import SystemIO

/// One open board device: writes command lines, reads reply text (MIDI framing already undone).
/// Used by one thread at a time; Sendable so an open device can be handed to the loop's thread.
protocol BoardTransport: AnyObject, Sendable {
    /// `serial:/dev/ttyACM0` and the like.
    var device: String { get }
    /// Descriptors that become readable when ``receive()`` has something (or hang up when the device is gone).
    var readDescriptors: [Int32] { get }
    /// Writes one command line, waiting at most `timeout` for room.
    func send(_ line: [UInt8], timeout: Duration) throws(BoardLinkError)
    /// Reply text received so far; nil when nothing is waiting. Throws ``BoardLinkError/Kind/lost``
    /// at end of file or on an I/O error.
    func receive() throws(BoardLinkError) -> [UInt8]?
    /// True when the last ``receive()`` is known to have emptied the device (a tty read shorter
    /// than the buffer): the caller need not read again until poll says readable, which saves
    /// the read that would return EAGAIN after every reply. False when unknown.
    var lastReceiveDrained: Bool { get }
    func close()
    /// The probe told what the board is: from now on a crash writes `safeState`.
    func armCrashGuard(safeState: [UInt8: UInt8])
}

extension BoardTransport {
    func armCrashGuard(safeState: [UInt8: UInt8]) {}
    var lastReceiveDrained: Bool { false }
}

enum BoardTransports {
    /// Opens the device `spec` names. Failures are one line naming the device, cause and fix.
    /// `exclusive`: this process drives the board (``BoardConnection``): a tty another driver
    /// holds is refused untouched (``SerialPort/open(path:baud:exclusive:)``); ALSA refuses a
    /// second opener of a rawmidi port by itself.
    static func open(_ spec: BoardSpec, profile: MemoryMapProfile, exclusive: Bool = false) throws(BoardLinkError) -> any BoardTransport {
        switch spec {
        case .simulated(let firmware):
            return try SimulatedTransport(firmware: firmware)
        case let .serial(path, baud):
            return try DescriptorTransport(spec: spec, path: path, baud: baud, framing: .text, profile: profile, exclusive: exclusive)
        case let .midiSerial(path, baud):
            return try DescriptorTransport(spec: spec, path: path, baud: baud, framing: .midi, profile: profile, exclusive: exclusive)
        case let .midi(device):
            return try RawMIDITransport(spec: spec, name: device)
        }
    }
}

/// A tty: `serial:` (text) or `midi-serial:` (MIDI bytes over the tty).
final class DescriptorTransport: BoardTransport {
    let device: String
    private let descriptor: Descriptor
    private let framing: Mutex<LinkFraming>

    init(spec: BoardSpec, path: String, baud: Int, framing: LinkFraming.Kind, profile: MemoryMapProfile,
         exclusive: Bool) throws(BoardLinkError) {
        device = spec.device
        do {
            descriptor = try SerialPort.open(path: path, baud: baud, exclusive: exclusive)
        } catch {
            throw BoardLinkError(.deviceUnavailable, device: spec.device,
                                 "\(spec.device): \(OpenFailure.serialAdvice(error, baud: baud))")
        }
        self.framing = Mutex(LinkFraming(framing))
        midi = framing == .midi
        // Until the probe says more: only addresses every kit firmware has.
        BoardCrashGuard.arm(fd: descriptor.rawValue,
                            bytes: BoardCrashGuard.stopBytes(safeState: profile.safeState(onMapOf: MemoryMapProfile.publishedFirmwareSize),
                                                             midi: midi))
    }

    private let midi: Bool

    func armCrashGuard(safeState: [UInt8: UInt8]) {
        BoardCrashGuard.arm(fd: descriptor.rawValue, bytes: BoardCrashGuard.stopBytes(safeState: safeState, midi: midi))
    }

    var readDescriptors: [Int32] { [descriptor.rawValue] }

    func send(_ line: [UInt8], timeout: Duration) throws(BoardLinkError) {
        let bytes = try framing.withLock { f throws(BoardLinkError) in try f.encode(line, device: device) }
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        let fd = descriptor.rawValue
        while offset < bytes.count {
            let n: Int?
            do {
                n = try Syscall.nonBlocking("write", subject: device) {
                    bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                }
            } catch {
                throw BoardLinkError(.lost, device: device, "\(device): write: \(error.reason)")
            }
            if let n { offset += n; continue }
            guard ContinuousClock.now < deadline else {
                throw BoardLinkError(.noReply, device: device, "\(device): the board takes no input (output full for \(timeout))")
            }
            _ = try? Poller.wait([(fd, .writable)], until: deadline)
        }
    }

    /// Kept across reads: a fresh 4 KiB array per reply (allocated, zeroed, freed) was a third of
    /// the board thread's work per reply (BENCHMARKS.md). Only the board link's
    /// thread reads.
    private let readBuffer = Mutex((buffer: [UInt8](repeating: 0, count: 4096), drained: false))

    /// A tty read returns what is queued, up to the buffer: a shorter read emptied the queue at
    /// that moment (what comes later makes poll say readable again).
    var lastReceiveDrained: Bool { readBuffer.withLock { $0.drained } }

    func receive() throws(BoardLinkError) -> [UInt8]? {
        let descriptor = descriptor
        let read = readBuffer.withLock { state in
            state.drained = false
            return Result { () throws(SystemError) -> [UInt8]? in
                guard let n = try descriptor.read(into: &state.buffer) else { return nil }
                state.drained = n > 0 && n < state.buffer.count
                return Array(state.buffer[..<n])
            }
        }
        let bytes: [UInt8]?
        switch read {
        case .success(let b): bytes = b
        case .failure(let error): throw BoardLinkError(.lost, device: device, "\(device): read: \(error.reason)")
        }
        guard let bytes else { return nil }
        if bytes.isEmpty { throw BoardLinkError(.lost, device: device, "\(device): end of file (the board went away)") }
        return framing.withLock { $0.decode(bytes) }
    }

    func close() {
        BoardCrashGuard.disarm(fd: descriptor.rawValue)
        descriptor.close()
    }

    deinit { close() }
}

/// `midi:hw:…`: ALSA rawmidi.
final class RawMIDITransport: BoardTransport {
    let device: String
    private let port: RawMIDIPort
    private let framing = Mutex(LinkFraming(.midi))

    init(spec: BoardSpec, name: String) throws(BoardLinkError) {
        device = spec.device
        do {
            port = try RawMIDIPort(name)
        } catch {
            throw BoardLinkError(.deviceUnavailable, device: spec.device, "\(spec.device): \(Self.advice(error))")
        }
    }

    static func advice(_ error: ALSAError) -> String {
        switch error.kind {
        case .noSoundDevices:
            return "no ALSA sound devices on this machine (/dev/snd is missing: plug the board in and load snd-usb-audio, or use serial:, midi-serial: or sim)"
        case .failed:
            switch error.errno {
            case ENOENT, ENODEV, ENXIO: return "no such MIDI device (`analog-remote boards` lists the rawmidi devices)"
            case EACCES, EPERM: return "permission denied (add your user to the audio group, then log in again)"
            case EBUSY: return "device busy (another program has the MIDI port open)"
            default: return error.description
            }
        }
    }

    var readDescriptors: [Int32] { port.inputDescriptors }

    func send(_ line: [UInt8], timeout: Duration) throws(BoardLinkError) {
        let bytes = try framing.withLock { f throws(BoardLinkError) in try f.encode(line, device: device) }
        do {
            try port.write(bytes, timeout: timeout)
        } catch {
            throw BoardLinkError(.lost, device: device, "\(device): \(Self.advice(error))")
        }
    }

    func receive() throws(BoardLinkError) -> [UInt8]? {
        let bytes: [UInt8]?
        do {
            bytes = try port.read()
        } catch {
            throw BoardLinkError(.lost, device: device, "\(device): \(Self.advice(error))")
        }
        guard let bytes else { return nil }
        return framing.withLock { $0.decode(bytes) }
    }

    func close() { port.close() }
}

/// `sim`: the simulated board in this process, with a new board's erased EEPROM. Its replies
/// wake the loop through an EventFlag.
final class SimulatedTransport: BoardTransport {
    let device: String
    private let board: Mutex<(board: SimulatedBoard, pending: [UInt8])>
    private let ready: EventFlag

    init(firmware: BoardProfileKind) throws(BoardLinkError) {
        device = BoardSpec.simulated(firmware).device
        do {
            ready = try EventFlag()
        } catch {
            throw BoardLinkError(.deviceUnavailable, device: device, "\(device): \(error)")
        }
        var b = SimulatedBoard(profile: firmware.profile, framing: .text, eeprom: SimulatedBoard.erasedEEPROM)
        _ = b.takeOutput()   // the boot prompt: a host that opens a CDC port later never sees it
        board = Mutex((b, []))
    }

    var readDescriptors: [Int32] { [ready.descriptor.rawValue] }

    func send(_ line: [UInt8], timeout: Duration) throws(BoardLinkError) {
        board.withLock { s in
            s.board.receive(line)
            s.pending += s.board.takeOutput()
        }
        ready.raise()
    }

    func receive() throws(BoardLinkError) -> [UInt8]? {
        ready.clear()
        let bytes = board.withLock { s in
            defer { s.pending.removeAll() }
            return s.pending
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// The simulated memory map (for a status view of `--board sim`).
    var memoryMap: [UInt8] { board.withLock { $0.board.memoryMap } }

    func close() {}
}
