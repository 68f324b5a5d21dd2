#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CALSA
import Synchronization

/// A readable ALSA sequencer port (a USB keyboard, a virtual keyboard, a DAW's output).
package struct SequencerPortInfo: Hashable, Sendable {
    package let client: Int32
    package let port: Int32
    package let clientName: String
    package let portName: String
    /// A port of a hardware device (the USB/serial driver's), not of a program.
    package let isHardware: Bool
    /// `20:0`: what `midi:` takes (a client name works too).
    package var address: String { "\(client):\(port)" }

    package init(client: Int32, port: Int32, clientName: String, portName: String, isHardware: Bool) {
        self.client = client
        self.port = port
        self.clientName = clientName
        self.portName = portName
        self.isHardware = isHardware
    }
}

/// What one ``SequencerInput/read()`` found.
package enum SequencerRead: Hashable, Sendable {
    /// MIDI bytes, as the port's events decode to (running status off).
    case bytes([UInt8])
    /// Nothing waiting.
    case nothing
    /// The kernel's input queue overflowed and events were dropped: a note-off may be lost.
    case overrun
    /// The source port or its client went away (unplugged, program quit).
    case sourceGone
}

/// Our own sequencer client with one input port subscribed to a source port ("like any MIDI
/// app": `aconnect SOURCE analog-remote` done for you), non-blocking. The source's events are
/// decoded back to MIDI bytes (`snd_midi_event_decode`) so that one byte-stream parser serves
/// the sequencer, rawmidi and serial inputs alike. The client also listens to the system
/// announce port, to see the source leave.
package final class SequencerInput: Sendable {
    /// The source as found: `20:0 Keystation 49 MIDI 1`.
    package let source: SequencerPortInfo
    /// The descriptors to poll for input (readable).
    package let inputDescriptors: [Int32]
    private struct Handles: ~Copyable {
        var seq: OpaquePointer?
        var decoder: OpaquePointer?
    }
    private let handles: Mutex<Handles>

    /// Opens the sequencer and subscribes to `name` (``SequencerPorts/resolve(_:in:)``); nil =
    /// the first readable port that is not Midi Through's (``SequencerPorts/isDefaultCandidate(_:)``).
    package init(_ name: String?) throws(ALSAError) {
        let label = name ?? "midi"
        guard ALSA.soundDevicesPresent else { throw ALSAError(.noSoundDevices, device: label) }
        var seq: OpaquePointer?
        try ALSA.check("snd_seq_open", device: label) {
            snd_seq_open(&seq, "default", SND_SEQ_OPEN_INPUT, SND_SEQ_NONBLOCK)
        }
        guard let seq else { throw ALSAError(.failed(call: "snd_seq_open", code: -ENODEV), device: label) }
        var decoder: OpaquePointer?
        do throws(ALSAError) {
            _ = snd_seq_set_client_name(seq, "analog-remote")
            let port = try ALSA.check("snd_seq_create_simple_port", device: label) {
                snd_seq_create_simple_port(seq, "controller input",
                                           UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE),
                                           UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
            }
            // Resolved here, not with snd_seq_parse_address: that one takes the first client whose
            // name merely starts with the text, knows no port names, and in some alsa-lib versions
            // writes a NUL into its (const) argument — through a NULL pointer for a bare name.
            let ports = SequencerPorts.list(seq)
            let candidate = name.map { SequencerPorts.resolve($0, in: ports) } ?? ports.first(where: SequencerPorts.isDefaultCandidate)
            guard let found = candidate else {
                throw ALSAError(.failed(call: name == nil ? "no MIDI input port" : "no sequencer port \"\(label)\"", code: -ENOENT),
                                device: label)
            }
            try ALSA.check("snd_seq_connect_from", device: label) { snd_seq_connect_from(seq, port, found.client, found.port) }
            // To hear the source leave; not fatal if refused.
            _ = snd_seq_connect_from(seq, port, Int32(SND_SEQ_CLIENT_SYSTEM), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE))
            try ALSA.check("snd_midi_event_new", device: label) { snd_midi_event_new(256, &decoder) }
            snd_midi_event_no_status(decoder, 1)
            let count = snd_seq_poll_descriptors_count(seq, Int16(POLLIN))
            var fds = [pollfd](repeating: pollfd(), count: Int(max(0, count)))
            let got = count > 0 ? snd_seq_poll_descriptors(seq, &fds, UInt32(count), Int16(POLLIN)) : 0
            source = found
            inputDescriptors = fds.prefix(Int(max(0, got))).map(\.fd)
        } catch {
            if let decoder { snd_midi_event_free(decoder) }
            snd_seq_close(seq)
            throw error
        }
        handles = Mutex(Handles(seq: seq, decoder: decoder))
    }

    deinit { close() }

    /// Drains the waiting events (at most `limit`).
    package func read(limit: Int = 256) throws(ALSAError) -> SequencerRead {
        let source = self.source
        return try handles.withLock { (h: inout Handles) throws(ALSAError) -> SequencerRead in
            guard let seq = h.seq, let decoder = h.decoder else {
                throw ALSAError(.failed(call: "snd_seq_event_input", code: -EBADF), device: source.address)
            }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 256)
            for _ in 0..<limit {
                var event: UnsafeMutablePointer<snd_seq_event_t>?
                let rc = snd_seq_event_input(seq, &event)
                if rc == -EAGAIN { break }
                if rc == -ENOSPC { return .overrun }
                if rc < 0 { throw ALSAError(.failed(call: "snd_seq_event_input", code: rc), device: source.address) }
                guard let event else { break }
                let type = UInt32(event.pointee.type)
                let from = event.pointee.source
                if Int32(from.client) == Int32(SND_SEQ_CLIENT_SYSTEM) {
                    let addr = CALSA_seq_event_addr(event)
                    let client = Int32(addr.client), port = Int32(addr.port)
                    switch type {
                    case SND_SEQ_EVENT_CLIENT_EXIT.rawValue where client == source.client:
                        return .sourceGone
                    case SND_SEQ_EVENT_PORT_EXIT.rawValue where client == source.client && port == source.port:
                        return .sourceGone
                    case SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue:
                        let c = CALSA_seq_event_connect(event)
                        if Int32(c.sender.client) == source.client && Int32(c.sender.port) == source.port { return .sourceGone }
                    default:
                        break
                    }
                    continue
                }
                let n = buffer.withUnsafeMutableBufferPointer { snd_midi_event_decode(decoder, $0.baseAddress, $0.count, event) }
                if n > 0 { bytes += buffer[..<Int(n)] }
            }
            return bytes.isEmpty ? .nothing : .bytes(bytes)
        }
    }

    /// Leaves the sequencer (the subscription goes with the client). Safe to call twice.
    package func close() {
        handles.withLock { h in
            if let d = h.decoder { snd_midi_event_free(d) }
            if let s = h.seq { snd_seq_close(s) }
            h.decoder = nil
            h.seq = nil
        }
    }
}

package enum SequencerPorts {
    /// Every readable, subscribable sequencer port except the system client's; empty on a
    /// machine without /dev/snd (``ALSAError/Kind/noSoundDevices`` is thrown there instead, so
    /// callers can say why).
    package static func list() throws(ALSAError) -> [SequencerPortInfo] {
        guard ALSA.soundDevicesPresent else { throw ALSAError(.noSoundDevices, device: "sequencer") }
        var seq: OpaquePointer?
        try ALSA.check("snd_seq_open", device: "sequencer") { snd_seq_open(&seq, "default", SND_SEQ_OPEN_INPUT, SND_SEQ_NONBLOCK) }
        guard let seq else { return [] }
        defer { snd_seq_close(seq) }
        return list(seq)
    }

    /// What plain `midi` picks: the first port that is not Midi Through's (it only echoes).
    package static func isDefaultCandidate(_ p: SequencerPortInfo) -> Bool {
        !p.clientName.hasPrefix("Midi Through")
    }

    static func list(_ seq: OpaquePointer) -> [SequencerPortInfo] {
        var clientInfo: OpaquePointer?
        var portInfo: OpaquePointer?
        guard snd_seq_client_info_malloc(&clientInfo) == 0, let clientInfo else { return [] }
        defer { snd_seq_client_info_free(clientInfo) }
        guard snd_seq_port_info_malloc(&portInfo) == 0, let portInfo else { return [] }
        defer { snd_seq_port_info_free(portInfo) }
        let me = snd_seq_client_id(seq)
        let wanted = UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
        var out: [SequencerPortInfo] = []
        snd_seq_client_info_set_client(clientInfo, -1)
        while snd_seq_query_next_client(seq, clientInfo) >= 0 {
            let client = snd_seq_client_info_get_client(clientInfo)
            guard client != Int32(SND_SEQ_CLIENT_SYSTEM), client != me else { continue }
            let clientName = ALSA.string(snd_seq_client_info_get_name(clientInfo))
            snd_seq_port_info_set_client(portInfo, client)
            snd_seq_port_info_set_port(portInfo, -1)
            while snd_seq_query_next_port(seq, portInfo) >= 0 {
                let caps = snd_seq_port_info_get_capability(portInfo)
                guard caps & wanted == wanted, caps & UInt32(SND_SEQ_PORT_CAP_NO_EXPORT) == 0 else { continue }
                out.append(SequencerPortInfo(client: client, port: snd_seq_port_info_get_port(portInfo), clientName: clientName,
                                             portName: ALSA.string(snd_seq_port_info_get_name(portInfo)),
                                             isHardware: snd_seq_port_info_get_type(portInfo) & UInt32(SND_SEQ_PORT_TYPE_HARDWARE) != 0))
            }
        }
        return out
    }

    /// The port `text` names among `ports` (the readable ones):
    /// - `20:0` — client 20, port 0; `20` — client 20's first port;
    /// - `NAME:1` — port 1 of the client called NAME;
    /// - `NAME` — the first port whose client or port is called NAME; failing that, whose client
    ///   or port name contains it.
    /// Names compare without regard to case. nil when nothing matches.
    package static func resolve(_ text: String, in ports: [SequencerPortInfo]) -> SequencerPortInfo? {
        func isNumber(_ s: Substring) -> Bool { !s.isEmpty && s.allSatisfy { $0.isASCII && $0.isNumber } }
        var name = Substring(text)
        var port: Int32?
        if let colon = text.lastIndex(of: ":"), isNumber(text[text.index(after: colon)...]) {
            port = Int32(text[text.index(after: colon)...])
            name = text[..<colon]
        }
        let candidates = port.map { p in ports.filter { $0.port == p } } ?? ports
        if isNumber(name) {
            return candidates.first { $0.client == Int32(name) }
        }
        let wanted = name.lowercased()
        guard !wanted.isEmpty else { return nil }
        if let exact = candidates.first(where: { $0.clientName.lowercased() == wanted || (port == nil && $0.portName.lowercased() == wanted) }) {
            return exact
        }
        return candidates.first { $0.clientName.lowercased().contains(wanted) || (port == nil && $0.portName.lowercased().contains(wanted)) }
    }
}
