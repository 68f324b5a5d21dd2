#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ALSAMIDI
import SerialTTY
import SystemIO

/// One opened MIDI input, whichever kind (``MIDIDeviceSpec``): a descriptor to poll and raw
/// MIDI bytes out. The three kinds share one parser (``MIDIFraming/MIDIStreamDecoder``) above this.
package final class MIDIDevice {
    package let spec: MIDIDeviceSpec
    /// What it turned out to be, for messages: `midi:20:0 (Keystation 49)`, `midi-serial:/dev/pts/3`.
    package let name: String
    /// False for a pipe, FIFO or regular file: its end is the end of the input, not an unplug
    /// (opening it again would replay a file or wait for a writer that is gone).
    package let canReconnect: Bool
    private let kind: Kind

    private enum Kind {
        case sequencer(SequencerInput)
        case rawMIDI(RawMIDIPort)
        case stream(Descriptor)
    }

    /// What one ``read()`` found.
    package enum Read: Equatable, Sendable {
        case bytes([UInt8])
        case nothing
        /// Events were dropped (sequencer queue overflow): a release may be lost.
        case overrun
        /// The device is gone; the text says how (`end of stream`, `the device was unplugged`).
        case ended(String)
    }

    private init(spec: MIDIDeviceSpec, name: String, canReconnect: Bool, kind: Kind) {
        self.spec = spec
        self.name = name
        self.canReconnect = canReconnect
        self.kind = kind
    }

    package static func open(_ spec: MIDIDeviceSpec) throws(MIDIDeviceError) -> MIDIDevice {
        switch spec {
        case .sequencer(let address):
            do {
                let input = try SequencerInput(address)
                let who = [input.source.clientName, input.source.portName].filter { !$0.isEmpty }.joined(separator: " / ")
                return MIDIDevice(spec: spec, name: "midi:\(input.source.address)" + (who.isEmpty ? "" : " (\(who))"),
                                  canReconnect: true, kind: .sequencer(input))
            } catch {
                throw MIDIDeviceError(spec: spec, alsa: error)
            }
        case .rawMIDI(let device):
            do {
                return MIDIDevice(spec: spec, name: spec.description, canReconnect: true,
                                  kind: .rawMIDI(try RawMIDIPort(device, output: false)))
            } catch {
                throw MIDIDeviceError(spec: spec, alsa: error)
            }
        case .serial(let path, let baud):
            do {
                let fd = try Syscall.call("open", subject: path) { Glibc.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC) }
                let descriptor = Descriptor(adopting: fd, label: path)
                let isTerminal = isatty(fd) == 1
                if isTerminal { try SerialPort.makeRaw(descriptor, speed: BaudRate.speed(baud)) }
                return MIDIDevice(spec: spec, name: spec.description, canReconnect: isTerminal, kind: .stream(descriptor))
            } catch {
                throw MIDIDeviceError(spec: spec, system: error)
            }
        }
    }

    /// The descriptor to poll for readability.
    package var descriptor: Int32? {
        switch kind {
        case .sequencer(let s): s.inputDescriptors.first
        case .rawMIDI(let r): r.inputDescriptors.first
        case .stream(let d): d.isOpen ? d.rawValue : nil
        }
    }

    /// What has arrived; never blocks.
    package func read() -> Read {
        switch kind {
        case .sequencer(let s):
            do {
                switch try s.read() {
                case .bytes(let b): return .bytes(b)
                case .nothing: return .nothing
                case .overrun: return .overrun
                case .sourceGone: return .ended("\(name) went away (unplugged, or its program quit)")
                }
            } catch {
                return .ended("\(name): \(error.reason)")
            }
        case .rawMIDI(let r):
            do {
                guard let bytes = try r.read() else { return .nothing }
                return .bytes(bytes)
            } catch {
                return .ended("\(name): \(error.reason) (unplugged?)")
            }
        case .stream(let d):
            do {
                guard let bytes = try d.read(max: 4096) else { return .nothing }
                if bytes.isEmpty {
                    return .ended(canReconnect ? "\(name): the device hung up (unplugged?)" : "\(name): end of stream")
                }
                return .bytes(bytes)
            } catch {
                return .ended(error.errno == EIO ? "\(name): the device hung up (unplugged?)" : "\(name): \(error.reason)")
            }
        }
    }

    /// Safe to call twice.
    package func close() {
        switch kind {
        case .sequencer(let s): s.close()
        case .rawMIDI(let r): r.close()
        case .stream(let d): d.close()
        }
    }
}

/// A MIDI input that cannot be opened: one line saying which and what to do.
package struct MIDIDeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    package let spec: MIDIDeviceSpec
    package let reason: String

    package init(spec: MIDIDeviceSpec, reason: String) {
        self.spec = spec
        self.reason = reason
    }

    init(spec: MIDIDeviceSpec, alsa error: ALSAError) {
        self.spec = spec
        switch error.kind {
        case .noSoundDevices:
            reason = "this machine has no ALSA sound devices (/dev/snd is missing: no driver, or a container); a serial MIDI bridge works with --input midi-serial:PATH"
        case .failed(let call, let code):
            switch -code {
            case ENOENT, ENODEV, ENXIO:
                let advice = "is it plugged in? `analog-remote midi-inputs` lists them"
                reason = call.hasPrefix("no ") ? "\(call) (\(advice))" : "\(call): no such MIDI port (\(advice))"
            case EACCES, EPERM:
                reason = "\(call): permission denied (add your user to the audio group, then log in again)"
            case EBUSY:
                reason = "\(call): device busy (another program has it open; use the sequencer port instead: `analog-remote midi-inputs`)"
            default:
                reason = "\(call): \(error.reason)"
            }
        }
    }

    init(spec: MIDIDeviceSpec, system error: SystemError) {
        self.spec = spec
        switch error.errno {
        case ENOENT, ENODEV, ENXIO: reason = "no such device (is the bridge plugged in? check the path)"
        case EACCES, EPERM: reason = "permission denied (add your user to the dialout group, then log in again)"
        default: reason = "\(error.call): \(error.reason)"
        }
    }

    package var description: String { "\(spec): \(reason)" }
}
