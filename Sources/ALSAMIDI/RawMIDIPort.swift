#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CALSA
import Synchronization
import SystemIO

/// One ALSA rawmidi port opened in both directions, non-blocking.
///
/// Both directions are opened even to only write: snd-usb-audio polls a USB device's IN endpoint
/// only while the input substream is open, and the kit's firmware stalls (up to 250 ms per
/// message) when its replies cannot leave.
package final class RawMIDIPort: Sendable {
    /// `hw:1,0,0`.
    package let name: String
    private struct Handles: ~Copyable {
        var input: OpaquePointer?
        var output: OpaquePointer?
    }
    private let handles: Mutex<Handles>
    /// The descriptors to poll for input (readable).
    package let inputDescriptors: [Int32]
    /// The descriptors to poll while output is full (writable).
    package let outputDescriptors: [Int32]

    /// Opens `name` (`hw:CARD,DEV[,SUB]` or any ALSA rawmidi name). `output: false` opens the
    /// input only (a keyboard read as a controller: some devices have no output).
    package init(_ name: String, output wantsOutput: Bool = true) throws(ALSAError) {
        self.name = name
        guard ALSA.soundDevicesPresent else { throw ALSAError(.noSoundDevices, device: name) }
        var input: OpaquePointer?
        var output: OpaquePointer?
        try ALSA.check("snd_rawmidi_open", device: name) {
            wantsOutput ? snd_rawmidi_open(&input, &output, name, Int32(SND_RAWMIDI_NONBLOCK))
                        : snd_rawmidi_open(&input, nil, name, Int32(SND_RAWMIDI_NONBLOCK))
        }
        func descriptors(_ h: OpaquePointer?, events: Int16) -> [Int32] {
            guard let h else { return [] }
            let n = snd_rawmidi_poll_descriptors_count(h)
            guard n > 0 else { return [] }
            var fds = [pollfd](repeating: pollfd(), count: Int(n))
            let got = snd_rawmidi_poll_descriptors(h, &fds, UInt32(n))
            return fds.prefix(Int(max(0, got))).map(\.fd)
        }
        inputDescriptors = descriptors(input, events: Int16(POLLIN))
        outputDescriptors = descriptors(output, events: Int16(POLLOUT))
        handles = Mutex(Handles(input: input, output: output))
    }

    deinit { close() }

    /// What has arrived (at most `max` bytes), or nil when nothing is waiting.
    package func read(max: Int = 512) throws(ALSAError) -> [UInt8]? {
        let name = self.name
        return try handles.withLock { (h: inout Handles) throws(ALSAError) -> [UInt8]? in
            guard let input = h.input else { throw ALSAError(.failed(call: "snd_rawmidi_read", code: -EBADF), device: name) }
            var buffer = [UInt8](repeating: 0, count: max)
            let n = buffer.withUnsafeMutableBytes { snd_rawmidi_read(input, $0.baseAddress, $0.count) }
            if n == -Int(EAGAIN) { return nil }
            if n < 0 { throw ALSAError(.failed(call: "snd_rawmidi_read", code: Int32(truncatingIfNeeded: n)), device: name) }
            buffer.removeSubrange(n...)
            return buffer
        }
    }

    /// Writes all of `bytes`, waiting (poll, up to `timeout` in all) while the output buffer is full.
    package func write(_ bytes: [UInt8], timeout: Duration = .milliseconds(500)) throws(ALSAError) {
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        while offset < bytes.count {
            let n = try handles.withLock { (h: inout Handles) throws(ALSAError) -> Int in
                guard let output = h.output else { throw ALSAError(.failed(call: "snd_rawmidi_write", code: -EBADF), device: name) }
                return bytes.withUnsafeBytes { snd_rawmidi_write(output, $0.baseAddress! + offset, $0.count - offset) }
            }
            if n >= 0 { offset += n; continue }
            guard n == -Int(EAGAIN) else {
                throw ALSAError(.failed(call: "snd_rawmidi_write", code: Int32(truncatingIfNeeded: n)), device: name)
            }
            guard ContinuousClock.now < deadline else {
                throw ALSAError(.failed(call: "snd_rawmidi_write", code: -ETIMEDOUT), device: name)
            }
            _ = try? Poller.wait(outputDescriptors.map { ($0, Poller.Events.writable) }, timeout: .milliseconds(20))
        }
    }

    /// Closes both directions. Safe to call twice.
    package func close() {
        handles.withLock { h in
            if let i = h.input { snd_rawmidi_close(i) }
            if let o = h.output { snd_rawmidi_close(o) }
            h.input = nil
            h.output = nil
        }
    }
}
