#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SerialTTY
import Synchronization
import SystemIO

/// The floors: one hop between two plain threads, measured as half a round trip. Each side
/// sleeps in `poll(2)` and then reads, exactly as the receiver, the board link and the bench do,
/// so the figure is what one wake-up of a sleeping thread costs on this machine for that kind of
/// descriptor.
///
/// The measuring thread writes `message` to `out`, polls `in` until the echo is back, and records
/// (t1 − t0) / 2; the echo thread polls its input, reads, and writes what it read back.
enum PingPong {
    struct Ends {
        /// Measurer writes here …
        let out: Int32
        /// … and reads the echo here.
        let input: Int32
        /// Echo thread reads here …
        let echoIn: Int32
        /// … and writes back here.
        let echoOut: Int32
    }

    /// Half the round trip, and each leg stamped directly (both threads read the same clock).
    struct Result: Sendable {
        /// (t1 − t0) / 2.
        let halfRoundTrip: Summary
        /// Measurer's write → echo thread's read returns: the wake-up of a thread that has been
        /// idle for the whole pause between samples.
        let there: Summary
        /// Echo thread's write → measurer's read returns: the wake-up of a thread that went to
        /// sleep microseconds earlier (its CPU may not have gone idle yet).
        let back: Summary
        /// CPU time the echo thread used per echo (its schedstat): what one wake-up from poll,
        /// one read and one write cost on this machine, kernel included (ns).
        let cpuPerWake: Double?
    }

    /// The stamps the two threads pass each other: 0 = taken.
    private final class Stamps: Sendable {
        let sent = Atomic<Int64>(0)
        let echoed = Atomic<Int64>(0)
        let there = Mutex<[Int64]>([])
        let cpu = Mutex<(Int64, Int)?>(nil)
    }

    /// Nanoseconds the calling thread has spent on a CPU (its schedstat), nil where not available.
    static func threadCPU() -> Int64? {
        let fd = open("/proc/thread-self/schedstat", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        return Int64(String(decoding: buffer[..<n].prefix { $0 != 0x20 }, as: UTF8.self))
    }

    static func measure(_ ends: Ends, message: [UInt8], samples: Int, warmUp: Int, pacer: Pacer,
                        interruption: Interruption) throws(BenchError) -> Result {
        let stop: EventFlag
        do { stop = try EventFlag() } catch { throw .setup("floor: \(error)") }
        let stopFD = stop.descriptor.rawValue
        let stamps = Stamps()
        let echo = BenchThread(name: "bench echo") {
            var buffer = [UInt8](repeating: 0, count: 256)
            var there: [Int64] = []
            there.reserveCapacity(samples + warmUp)
            var fds = [pollfd(fd: ends.echoIn, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            var cpuStart: Int64?
            var echoes = 0
            while true {
                fds[0].revents = 0
                fds[1].revents = 0
                if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue }; break }
                if fds[1].revents != 0 { break }
                let n = read(ends.echoIn, &buffer, buffer.count)
                let now = Monotonic.now()
                guard n > 0 else { continue }
                let sent = stamps.sent.exchange(0, ordering: .acquiringAndReleasing)
                if sent != 0 { there.append(now - sent) }
                stamps.echoed.store(Monotonic.now(), ordering: .releasing)
                _ = write(ends.echoOut, buffer, n)
                // CPU per echo, counted over the samples after the warm-up.
                if sent != 0 {
                    echoes += 1
                    if echoes == warmUp { cpuStart = threadCPU() }
                }
            }
            if let cpuStart, let end = threadCPU() {
                stamps.cpu.withLock { $0 = (end - cpuStart, echoes - warmUp) }
            }
            stamps.there.withLock { $0 = there }
        }
        var half = SampleSet(warmUp: warmUp, expected: samples)
        var back = SampleSet(warmUp: warmUp, expected: samples)
        var pacer = pacer
        var buffer = [UInt8](repeating: 0, count: 256)
        var fd = [pollfd(fd: ends.input, events: Int16(POLLIN), revents: 0)]
        do throws(BenchError) {
            for _ in 0..<(samples + warmUp) {
                try interruption.check()
                let t0 = Monotonic.now()
                stamps.sent.store(t0, ordering: .releasing)
                guard write(ends.out, message, message.count) == message.count else {
                    throw .measurement("floor: write failed: \(SystemError(call: "write", errno: errno))")
                }
                var got = 0
                var firstRead: Int64 = 0
                while got < message.count {
                    fd[0].revents = 0
                    let rc = poll(&fd, 1, 2000)
                    if rc == 0 { throw .measurement("floor: no echo within 2 s") }
                    if rc < 0 { if errno == EINTR { continue }; throw .measurement("floor: poll failed") }
                    let n = read(ends.input, &buffer, buffer.count)
                    if firstRead == 0 { firstRead = Monotonic.now() }
                    if n > 0 { got += n } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        throw .measurement("floor: read failed")
                    }
                }
                let t1 = Monotonic.now()
                half.record((t1 - t0) / 2)
                back.record(firstRead - stamps.echoed.load(ordering: .acquiring))
                pacer.pause()
            }
        } catch {
            stop.raise()
            echo.join()
            throw error
        }
        stop.raise()
        echo.join()
        var there = SampleSet(warmUp: warmUp, expected: samples)
        for v in stamps.there.withLock({ $0 }) { there.record(v) }
        guard let h = half.summary, let t = there.summary, let b = back.summary else { throw .measurement("floor: no samples") }
        let cpu = stamps.cpu.withLock { $0 }.flatMap { $0.1 > 0 ? Double($0.0) / Double($0.1) : nil }
        return Result(halfRoundTrip: h, there: t, back: b, cpuPerWake: cpu)
    }

    // MARK: the three kinds of hop on the receive path

    /// Two UDP sockets on 127.0.0.1 connected to each other: an 8-byte datagram each way.
    static func udp(samples: Int, warmUp: Int, pacer: Pacer, interruption: Interruption) throws(BenchError) -> Result {
        let a = try loopbackSocket(), b = try loopbackSocket()
        defer { close(a.fd); close(b.fd) }
        try connect(a.fd, to: b.port)
        try connect(b.fd, to: a.port)
        return try measure(Ends(out: a.fd, input: a.fd, echoIn: b.fd, echoOut: b.fd),
                           message: [0x3E, 0x99, 0x99, 0x9A, 0, 0, 0, 1], samples: samples, warmUp: warmUp,
                           pacer: pacer, interruption: interruption)
    }

    /// A pseudo-terminal: a 10-byte `W` line written on the side a receiver opens (raw, as
    /// `serial:` opens it), echoed by a thread on the master side (where the board sits).
    static func pty(samples: Int, warmUp: Int, pacer: Pacer, interruption: Interruption) throws(BenchError) -> Result {
        let pty: PseudoTerminal
        let slave: Descriptor
        do {
            pty = try PseudoTerminal()
            slave = try SerialPort.open(path: pty.slavePath, baud: 115_200)
        } catch {
            throw .setup("pty floor: \(error)")
        }
        defer { slave.close(); pty.close() }
        return try measure(Ends(out: slave.rawValue, input: slave.rawValue, echoIn: pty.master.rawValue, echoOut: pty.master.rawValue),
                           message: Array("W 22 aa2a\n".utf8), samples: samples, warmUp: warmUp,
                           pacer: pacer, interruption: interruption)
    }

    /// Two pipes: one byte each way — the wake-up flag (`EventFlag`) a thread raises to wake
    /// another, as the receive loop does to wake the board link's thread.
    static func pipe(samples: Int, warmUp: Int, pacer: Pacer, interruption: Interruption) throws(BenchError) -> Result {
        var there: [Int32] = [-1, -1], back: [Int32] = [-1, -1]
        guard Glibc.pipe(&there) == 0, Glibc.pipe(&back) == 0 else { throw .setup("pipe floor: pipe failed") }
        defer { for fd in there + back { close(fd) } }
        return try measure(Ends(out: there[1], input: back[0], echoIn: there[0], echoOut: back[1]),
                           message: [1], samples: samples, warmUp: warmUp, pacer: pacer, interruption: interruption)
    }

    private static func loopbackSocket() throws(BenchError) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .setup("udp floor: socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else { close(fd); throw .setup("udp floor: bind 127.0.0.1 failed") }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private static func connect(_ fd: Int32, to port: UInt16) throws(BenchError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        let ok = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard ok else { throw .setup("udp floor: connect failed") }
    }
}
