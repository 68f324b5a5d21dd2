#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardProtocol
import ControlPlane
import ControlWire
import RemoteWire
import Synchronization
import SystemIO

/// Item 6: how many operations per second the pure code does on one core, no I/O. Each body
/// runs in batches until `minimum` has passed; its result feeds a checksum so the optimiser
/// cannot drop the work.
package struct Throughput: Sendable, Codable, Hashable {
    package let name: String
    package let operations: Int
    package let seconds: Double
    /// The measuring thread's CPU time over the same span (CLOCK_THREAD_CPUTIME_ID): on a shared
    /// machine, wall time also counts the time other programs held the core.
    package let cpuSeconds: Double
    package var perSecond: Double { Double(operations) / seconds }
    package var nanosecondsEach: Double { seconds * 1e9 / Double(operations) }
    package var cpuNanosecondsEach: Double { cpuSeconds * 1e9 / Double(operations) }

    enum CodingKeys: String, CodingKey { case name, operations, seconds, cpuSeconds, perSecond, nanosecondsEach, cpuNanosecondsEach }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(operations, forKey: .operations)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(perSecond, forKey: .perSecond)
        try c.encode(nanosecondsEach, forKey: .nanosecondsEach)
        try c.encode(cpuSeconds, forKey: .cpuSeconds)
        try c.encode(cpuNanosecondsEach, forKey: .cpuNanosecondsEach)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        operations = try c.decode(Int.self, forKey: .operations)
        seconds = try c.decode(Double.self, forKey: .seconds)
        cpuSeconds = try c.decodeIfPresent(Double.self, forKey: .cpuSeconds) ?? seconds
    }

    init(name: String, operations: Int, seconds: Double, cpuSeconds: Double) {
        self.name = name
        self.operations = operations
        self.seconds = seconds
        self.cpuSeconds = cpuSeconds
    }
}

/// Keeps results alive so the optimiser cannot remove the work that made them.
@inline(never)
func consume(_ value: UInt64) {
    sink.add(value, ordering: .relaxed)
}
private let sink = Atomic<UInt64>(0)

enum CodecThroughput {
    static func measure(_ name: String, minimum: Int64, batch: Int, _ body: (Int) -> UInt64) -> Throughput {
        _ = body(batch)   // warm-up: caches, lazy globals
        var operations = 0
        let start = Monotonic.now(), cpuStart = threadCPU()
        var now = start
        while now - start < minimum {
            consume(body(batch))
            operations += batch
            now = Monotonic.now()
        }
        return Throughput(name: name, operations: operations, seconds: Double(now - start) / 1e9,
                          cpuSeconds: Double(threadCPU() - cpuStart) / 1e9)
    }

    /// This thread's CPU time in nanoseconds.
    static func threadCPU() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    static func all(minimum: Int64) -> [Throughput] {
        var results: [Throughput] = []
        let states = (0..<1024).map { i in
            ControllerState(angle: Float(i % 315) / 100 - 1.57, buttons: Buttons(rawValue: UInt32(i % 64)))
        }
        let packets = states.map(StatePacket.encode)

        results.append(measure("state packet: encode (8 bytes into a reused buffer)", minimum: minimum, batch: 4096) { n in
            var buffer = [UInt8](repeating: 0, count: StatePacket.size)
            var sum: UInt64 = 0
            for i in 0..<n {
                StatePacket.encode(states[i & 1023], into: &buffer)
                sum &+= UInt64(buffer[3])
            }
            return sum
        })
        results.append(measure("state packet: decode", minimum: minimum, batch: 4096) { n in
            var sum: UInt64 = 0
            for i in 0..<n {
                if let state = try? StatePacket.decode(packets[i & 1023]) { sum &+= UInt64(state.buttons.rawValue) }
            }
            return sum
        })

        // The board's answer to a W: the per-character echo, `\r\n`, then the prompt `\r\n>`.
        let commands = (0..<256).map { i in BoardCommand.write(address: 0x22, bytes: [UInt8(i), UInt8(255 - i)]).line }
        let replies = commands.map { $0 + [0x0D, 0x0A, 0x0D, 0x0A, 0x3E] }
        results.append(measure("board reply: parse (BoardReplyDecoder, echo + prompt)", minimum: minimum, batch: 2048) { n in
            var decoder = BoardReplyDecoder()
            var sum: UInt64 = 0
            for i in 0..<n {
                decoder.expect(commands[i & 255])
                decoder.append(replies[i & 255])
                if let reply = try? decoder.decode() { sum &+= UInt64(reply.echo.count) }
            }
            return sum
        })
        results.append(measure("board command: format a W line", minimum: minimum, batch: 2048) { n in
            var sum: UInt64 = 0
            for i in 0..<n {
                sum &+= UInt64(BoardCommand.write(address: 0x22, bytes: [UInt8(truncatingIfNeeded: i), 7]).line.count)
            }
            return sum
        })

        let ping = ControlDatagram(header: ControlHeader(type: .ping, connection: 0x1234_5678),
                                   payload: ControlMessage.ping(id: 7, sentNanos: 123_456_789).encodePayload()[...]).encode()
        let hello = ControlDatagram(header: ControlHeader(type: .hello, connection: 0x1234_5678, sequence: 1),
                                    payload: ControlMessage.hello(.init(peerID: 42, displayName: "tablet 7", session: "room-12")).encodePayload()[...]).encode()
        for (label, datagram) in [("ping", ping), ("hello", hello)] {
            results.append(measure("control datagram: decode header + \(label) payload", minimum: minimum, batch: 2048) { n in
                var sum: UInt64 = 0
                for _ in 0..<n {
                    if let d = try? ControlDatagram.decode(datagram),
                       let m = try? ControlMessage.decode(type: d.header.type, payload: d.payload) {
                        sum &+= UInt64(m.type.rawValue)
                    }
                }
                return sum
            })
        }

        // The authenticated mode's cost per state: what a controller adds to seal it
        // and a receiver to open it: libsodium's IETF ChaCha20 AEAD with a replay window, under keys
        // read once per connection, as the receiver and the controller hold them.
        let secret = RobotSecret(bytes: Array(0..<12))
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: Array(repeating: 1, count: 16),
                                        controllerNonce: Array(repeating: 2, count: 16), connectionID: 0x1122_3344_5566_7788)
        let packet = StatePacket.encode(ControllerState(angle: 0.25, buttons: .forward))
        results.append(measure("authenticated envelope: seal + open a state packet (ChaCha20 AEAD, libsodium)", minimum: minimum, batch: 1024) { n in
            var window = ReplayWindow()
            var sum: UInt64 = 0
            for i in 0..<n {
                let sealed = SealedEnvelope.seal(packet, connectionID: 0x1122_3344_5566_7788, instance: 1, counter: UInt64(i + 1),
                                                 key: keys.controllerToReceiver)
                if case .success(let e) = SealedEnvelope.open(sealed, key: keys.controllerToReceiver, window: &window) {
                    sum &+= UInt64(e.inner[7])
                }
            }
            return sum
        })

        // The cipher alone, as the envelope calls it: the same 8 bytes and 36-byte AAD, sealed and
        // opened in place on one buffer (no arrays, no replay window): what libsodium costs.
        let key = keys.controllerToReceiver
        results.append(measure("AEAD alone: seal + open a state packet in place (AEADKey, libsodium)", minimum: minimum, batch: 1024) { n in
            var buffer = [UInt8](repeating: 0x41, count: SealedEnvelope.headerSize + StatePacket.size + AEADKey.tagSize)
            var sum: UInt64 = 0
            buffer.withUnsafeMutableBytes { raw in
                let end = SealedEnvelope.headerSize + StatePacket.size
                let aad = UnsafeRawBufferPointer(rebasing: raw[..<SealedEnvelope.headerSize])
                let text = UnsafeMutableRawBufferPointer(rebasing: raw[SealedEnvelope.headerSize..<end])
                let tag = UnsafeMutableRawBufferPointer(rebasing: raw[end...])
                for i in 0..<n {
                    packet.withUnsafeBytes { text.copyMemory(from: $0) }
                    let nonce = AEADKey.Nonce(counter: UInt64(i + 1))
                    key.seal(nonce: nonce, aad: aad, text: text, tag: tag)
                    if key.open(nonce: nonce, aad: aad, text: text, tag: UnsafeRawBufferPointer(tag)) { sum &+= UInt64(text[7]) }
                }
            }
            return sum
        })

        results.append(measure("board writer: set motors, next W, confirm (MemoryMapWriter)", minimum: minimum, batch: 1024) { n in
            var writer = MemoryMapWriter(profile: .kit)
            writer.connected()
            while writer.nextCommand() != nil { writer.succeeded() }
            var sum: UInt64 = 0
            for i in 0..<n {
                writer.setDesired(FreshnessSimulation.values(i))
                if let command = writer.nextCommand() { sum &+= UInt64(command.line.count) }
                writer.succeeded()
            }
            return sum
        })
        return results
    }
}
