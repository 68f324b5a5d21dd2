#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Controller
import Console
import RemoteWire
import SystemIO

/// A latency series through the real code, with its stages when they could be stamped.
struct PathMeasurement: Sendable {
    var total: Summary
    var stages: [NamedSummary] = []
    /// Samples whose `W` never came within a second (counted, not recorded).
    var lost = 0
    /// The receiver's own `summary …` line at exit.
    var receiverSummary: String?
}

package struct NamedSummary: Sendable, Codable, Hashable {
    package let name: String
    package let summary: Summary
}

/// Where the receiver under test runs.
enum Placement: String, Sendable, Codable {
    /// `ReceiverService` on a thread of the bench (its hand-off to the board link is stamped).
    case inProcess = "in-process"
    /// The built binary, `analog-remote receive`, as a child process.
    case child = "child process"
}

struct LatencySettings: Sendable {
    var samples: Int
    var warmUp: Int
    var pacer: Pacer
    let interruption: Interruption
    let executable: String
    /// How long one sample may wait for its `W` before it counts as lost.
    var sampleTimeout: Int64 = 1_000_000_000
}

/// Items 2 and 3 of the benchmark: state in → first byte of the resulting `W` readable on the
/// board side of a pseudo-terminal, through the real receiver (and for the whole path, the real
/// controller), with a ``BoardSide`` answering like the firmware. One sample at a time: send,
/// wait for the `W`, answer it, pause (``Pacer``), so every sample starts from an idle link.
enum LatencyPaths {
    /// A datagram from a plain socket of the bench → … → `W` on the board side.
    /// `extraArguments`: more `receive` options (a child receiver only).
    static func receivePath(_ placement: Placement, _ settings: LatencySettings,
                            extraArguments: [String] = []) throws(BenchError) -> PathMeasurement {
        var board = try BoardSide()
        let receiver = try RunningReceiver(placement, board: &board, settings: settings, extraArguments: extraArguments)
        let sender = try DatagramSender(port: receiver.port)
        defer { sender.close() }
        var result = try sample(board: &board, receiver: receiver, settings: settings,
                                stages: ["datagram sent → receiver hands values to the board link",
                                         "hand-off → first byte of W readable on the board side"]) { i throws(BenchError) in
            try sender.send(Self.state(i))
        }
        result.receiverSummary = try receiver.stop(board: &board)
        return result
    }

    /// A line written to the controller's stdin (a pipe) → `control`'s send loop → UDP → the
    /// receiver → `W` on the board side.
    ///
    /// `secret`: both in the authenticated mode (`receive --accept secret`, `control --secret`;
    /// child processes only), so every state travels sealed: the row that shows what it adds.
    /// `named`: the controller says hello (`control --name`), so its control session rides along
    /// without sealing anything: what the session itself costs, apart from the envelope.
    static func wholePath(_ placement: Placement, _ settings: LatencySettings, secret: Bool = false,
                          named: Bool = false) throws(BenchError) -> PathMeasurement {
        var board = try BoardSide()
        let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"
        let receiver = try RunningReceiver(placement, board: &board, settings: settings,
                                           extraArguments: secret ? ["--accept", "secret", "--secret", words] : [])
        let controller = try RunningController(placement, port: receiver.port, settings: settings,
                                               extraArguments: (secret ? ["--secret", words] : []) + (named ? ["--name", "bench"] : []))
        var result: PathMeasurement
        do {
            result = try sample(board: &board, receiver: receiver, settings: settings,
                                stages: ["line written → receiver hands values to the board link",
                                         "hand-off → first byte of W readable on the board side"]) { i throws(BenchError) in
                try controller.write(i < 0 ? Stimulus.restingLine : Stimulus.lines[i % 2])
            }
        } catch {
            try? controller.stop()
            throw error
        }
        try controller.stop()
        result.receiverSummary = try receiver.stop(board: &board)
        return result
    }

    /// Rows 2′ and 2r taking turns: two child receivers (the second with `extraArguments`, e.g.
    /// `--sensor-rate 0`) on boards of their own, sampled in turn, one sample each, so a burst
    /// of the machine's noise (this VM's tail swings ±15 % from one minute to the next) falls on
    /// both rows alike and their ratio compares like with like. Trap: longer turns leave the
    /// waiting receiver's board unanswered (a read on the wire times out after 100 ms, three in
    /// a row reopen the link) and its failsafe trips: what the next turn measured was that.
    static func receivePathsTakingTurns(_ settings: LatencySettings,
                                        extraArguments: [String]) throws(BenchError) -> (PathMeasurement, PathMeasurement) {
        let names = ["datagram sent → receiver hands values to the board link", "hand-off → first byte of W readable on the board side"]
        var boards = [try BoardSide(), try BoardSide()]
        let receivers = [try RunningReceiver(.child, board: &boards[0], settings: settings),
                         try RunningReceiver(.child, board: &boards[1], settings: settings, extraArguments: extraArguments)]
        let senders = [try DatagramSender(port: receivers[0].port), try DatagramSender(port: receivers[1].port)]
        defer { for sender in senders { sender.close() } }
        var samplers = [PathSampler(settings: settings, stages: names), PathSampler(settings: settings, stages: names)]
        for k in 0..<2 {
            let sender = senders[k]
            try samplers[k].prime(board: &boards[k]) { i throws(BenchError) in try sender.send(Self.state(i)) }
        }
        var pacer = settings.pacer
        var round = 0
        while samplers.contains(where: { !$0.isDone }) {
            // Who goes first alternates: the first sample after a pause meets a machine that
            // went idle (measured: 2′ always first was ~30 µs slower at p50 than 2r behind it).
            round += 1
            for k in (round % 2 == 0 ? [0, 1] : [1, 0]) where !samplers[k].isDone {
                let sender = senders[k]
                try samplers[k].take(1, board: &boards[k], receiver: receivers[k], paced: false) { i throws(BenchError) in
                    try sender.send(Self.state(i))
                }
            }
            // One pause for the pair, both boards answered meanwhile.
            try BoardSide.serve(&boards, until: Monotonic.now() + pacer.nextPause())
        }
        var results = [try samplers[0].measurement(), try samplers[1].measurement()]
        for k in 0..<2 { results[k].receiverSummary = try receivers[k].stop(board: &boards[k]) }
        return (results[0], results[1])
    }

    /// The state of sample i (i < 0: the resting state).
    static func state(_ i: Int) -> ControllerState { i < 0 ? Stimulus.resting : Stimulus.states[i % 2] }

    /// Sends `stimulus(i)` for sample i (i < 0: the resting state), waits for its `W`.
    static func sample(board: inout BoardSide, receiver: RunningReceiver, settings: LatencySettings, stages names: [String],
                               _ stimulus: (Int) throws(BenchError) -> Void) throws(BenchError) -> PathMeasurement {
        var sampler = PathSampler(settings: settings, stages: names)
        try sampler.prime(board: &board, stimulus)
        try sampler.take(sampler.remaining, board: &board, receiver: receiver, stimulus)
        return try sampler.measurement()
    }
}

/// One path's series, taken in one go or in turns (``LatencyPaths/receivePathsTakingTurns``).
struct PathSampler {
    let settings: LatencySettings
    let names: [String]
    private var all: SampleSet
    private var first: SampleSet
    private var second: SampleSet
    private var pacer: Pacer
    private var lost = 0
    private var taken = 0
    /// The next state to send: `Stimulus.states[next % 2]`, a change from the one before.
    private var next = 0

    init(settings: LatencySettings, stages names: [String]) {
        self.settings = settings
        self.names = names
        all = SampleSet(warmUp: settings.warmUp, expected: settings.samples)
        first = SampleSet(warmUp: settings.warmUp, expected: settings.samples)
        second = SampleSet(warmUp: settings.warmUp, expected: settings.samples)
        pacer = settings.pacer
    }

    /// Samples still to take (the warm-up first).
    var remaining: Int { settings.samples + settings.warmUp - taken }
    var isDone: Bool { remaining <= 0 }

    /// The resting state, and the board answered until it is quiet: the next state is a change.
    mutating func prime(board: inout BoardSide, _ stimulus: (Int) throws(BenchError) -> Void) throws(BenchError) {
        try stimulus(-1)
        try board.settle(quiet: 100_000_000, until: Monotonic.now() + 2_000_000_000)
        next = 0
    }

    /// Takes up to `count` more samples (after ``prime(board:_:)``): one state after another,
    /// `paced`: with a pause after each, the board answered meanwhile (``BoardSide/serve(until:)``).
    mutating func take(_ count: Int, board: inout BoardSide, receiver: RunningReceiver, paced: Bool = true,
                       _ stimulus: (Int) throws(BenchError) -> Void) throws(BenchError) {
        let total = settings.samples + settings.warmUp
        let end = min(total, taken + count)
        while taken < end {
            try settings.interruption.check()
            let expected = Stimulus.expectedWrites[next % 2]
            let t0 = Monotonic.now()
            try stimulus(next)
            guard let t1 = try board.waitFor(expected, until: t0 + settings.sampleTimeout) else {
                lost += 1
                if lost > max(10, total / 100) {
                    throw .measurement("more than \(lost) samples got no W within \(settings.sampleTimeout / 1_000_000) ms; is the machine overloaded?")
                }
                try prime(board: &board, stimulus)   // after the resting state, states[0] is a change again
                continue
            }
            all.record(t1 - t0)
            if let handOff = receiver.lastHandOff, handOff >= t0, handOff <= t1 {
                first.record(handOff - t0)
                second.record(t1 - handOff)
            }
            taken += 1
            next += 1
            if paced { try board.serve(until: Monotonic.now() + pacer.nextPause()) }
        }
    }

    func measurement() throws(BenchError) -> PathMeasurement {
        guard let summary = all.summary else { throw .measurement("no samples") }
        var result = PathMeasurement(total: summary, lost: lost)
        if let a = first.summary, let b = second.summary {
            result.stages = [NamedSummary(name: names[0], summary: a), NamedSummary(name: names[1], summary: b)]
        }
        return result
    }
}

/// A plain IPv4 UDP socket sending state packets to the receiver on 127.0.0.1.
struct DatagramSender {
    let fd: Int32
    private var address = sockaddr_in()

    init(port: UInt16) throws(BenchError) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .setup("udp socket: \(SystemError(call: "socket", errno: errno).reason)") }
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
    }

    func send(_ state: ControllerState) throws(BenchError) {
        let packet = StatePacket.encode(state)
        var to = address
        let n = withUnsafePointer(to: &to) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, packet, packet.count, 0, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard n == packet.count else { throw .measurement("udp send: \(SystemError(call: "sendto", errno: errno).reason)") }
    }

    func close() { _ = Glibc.close(fd) }
}

/// The receiver under test, in-process or child, driving the board on `board`'s pty.
final class RunningReceiver {
    let port: UInt16
    private let inProcess: InProcessReceiver?
    private let child: Child?
    private let settings: LatencySettings

    init(_ placement: Placement, board: inout BoardSide, settings: LatencySettings,
         extraArguments: [String] = []) throws(BenchError) {
        self.settings = settings
        switch placement {
        case .inProcess:
            precondition(extraArguments.isEmpty, "extra arguments are for the child receiver")
            // The receiver probes the board while it is built: answer meanwhile.
            let receiver = try InProcessReceiver(boardPath: board.path, interruption: settings.interruption) {
                if board.waitReadable(until: Monotonic.now() + 2_000_000) { _ = try? board.service() }
            }
            inProcess = receiver
            child = nil
            port = receiver.port
        case .child:
            let process = try Child.receiver(executable: settings.executable,
                                             arguments: ["--quiet", "--no-advertise", "--port", "0",
                                                         "--board", "serial:\(board.path)"] + extraArguments)
            child = process
            inProcess = nil
            port = try RunningReceiver.awaitPort(process, board: &board, settings: settings)
        }
        try board.settle(quiet: 100_000_000, until: Monotonic.now() + 3_000_000_000)
    }

    /// A peer receiver (benchmarks/peers/): `executable arguments…`, which prints the same
    /// `receiving on udp port N` line as ours and drives the board on `board`'s pty.
    init(peer executable: String, arguments: [String], label: String, board: inout BoardSide,
         settings: LatencySettings) throws(BenchError) {
        self.settings = settings
        let process = try Child.bench(executable: executable, arguments: arguments, label: label)
        child = process
        inProcess = nil
        port = try RunningReceiver.awaitPort(process, board: &board, settings: settings)
        try board.settle(quiet: 100_000_000, until: Monotonic.now() + 3_000_000_000)
    }

    /// Waits for the child's `receiving on udp port N` line, answering the board meanwhile (the
    /// board link writes the safe state as soon as it opens).
    private static func awaitPort(_ process: Child, board: inout BoardSide, settings: LatencySettings) throws(BenchError) -> UInt16 {
        let deadline = Monotonic.now() + 20_000_000_000
        while true {
            try settings.interruption.check()
            if let line = process.stdout.split(separator: "\n").first(where: { $0.hasPrefix("receiving on udp port ") }) {
                guard let found = UInt16(line.dropFirst("receiving on udp port ".count)) else {
                    throw .setup("\(process.label) printed a bad port line: \(line)")
                }
                return found
            }
            if process.hasExited || Monotonic.now() > deadline {
                throw .setup("\(process.label) did not start: \(process.stderr.split(separator: "\n").suffix(3).joined(separator: " | "))")
            }
            if board.waitReadable(until: Monotonic.now() + 2_000_000) { _ = try board.service() }
        }
    }

    /// The child's pid (nil in process): for its CPU time.
    var pid: pid_t? { child?.pid }

    /// The in-process receiver's latest hand-off to the board link; nil for a child.
    var lastHandOff: Int64? { inProcess?.lastHandOff }

    /// Stops it (answering the board while it writes the safe state); returns its summary line.
    func stop(board: inout BoardSide) throws(BenchError) -> String? {
        if let inProcess {
            try inProcess.stop(board: &board)
            return inProcess.summary
        }
        guard let child else { return nil }
        child.signal(SIGTERM)
        let exited = child.wait(timeout: .seconds(5)) {
            if board.waitReadable(until: Monotonic.now() + 1_000_000) { _ = try? board.service() }
        }
        if !exited { child.stop(grace: .seconds(1)) }
        if let status = child.exitStatus, status != 0 {
            throw .measurement("\(child.label) exited with status \(status): \(child.stderr.split(separator: "\n").suffix(3).joined(separator: " | "))")
        }
        return child.stdout.split(separator: "\n").last { $0.hasPrefix("summary ") }.map(String.init)
    }
}

/// The controller under test: `SendLoop` + `StdinSource` on a thread of the bench reading a pipe,
/// or `analog-remote control --input stdin` as a child. Either way its input is a pipe.
final class RunningController {
    private let child: Child?
    private let input: Descriptor
    private let thread: BenchThread?

    init(_ placement: Placement, port: UInt16, settings: LatencySettings, extraArguments: [String] = []) throws(BenchError) {
        switch placement {
        case .child:
            let process = try Child.bench(executable: settings.executable,
                                          arguments: ["control", "--quiet", "--peer", "127.0.0.1:\(port)", "--input", "stdin"] + extraArguments,
                                          label: "controller", withStdin: true)
            guard let stdin = process.stdin else { throw .setup("controller: no stdin pipe") }
            child = process
            input = stdin
            thread = nil
        case .inProcess:
            var fds: [Int32] = [-1, -1]
            precondition(extraArguments.isEmpty, "extra arguments are for the child controller")
            guard pipe(&fds) == 0 else { throw .setup("controller pipe: \(SystemError(call: "pipe", errno: errno).reason)") }
            let readEnd = Descriptor(adopting: fds[0], label: "controller stdin")
            input = Descriptor(adopting: fds[1], label: "controller stdin")
            let destination: Destination
            let runner: LoopRunner<Never>
            do {
                let address = try SocketAddress.resolve("127.0.0.1:\(port)")
                destination = try Destination(Destination.Peer(address: address, label: "127.0.0.1:\(port)"))
                runner = try LoopRunner(stopOn: [SIGINT])
            } catch {
                throw .setup("in-process controller: \(error)")
            }
            child = nil
            // The loop and its input source are built on the thread that runs them (they are
            // not Sendable); everything handed over is.
            thread = BenchThread(name: "bench controller") {
                let loop = SendLoop(source: StdinSource(fd: readEnd.rawValue, name: "bench"), destination: destination,
                                    schedule: .init(rate: 50), signals: runner.stopToken, status: StatusLine(quiet: true))
                _ = try? loop.run()
                readEnd.close()
            }
        }
    }

    /// A peer controller (benchmarks/peers/): `executable arguments…`, reading lines on stdin.
    init(peer executable: String, arguments: [String], label: String) throws(BenchError) {
        let process = try Child.bench(executable: executable, arguments: arguments, label: label, withStdin: true)
        guard let stdin = process.stdin else { throw .setup("\(label): no stdin pipe") }
        child = process
        input = stdin
        thread = nil
    }

    /// The child's pid (nil in process): for its CPU time.
    var pid: pid_t? { child?.pid }

    func write(_ line: String) throws(BenchError) {
        do {
            try input.writeAll(Array(line.utf8))
        } catch {
            throw .measurement("controller input: \(error)")
        }
    }

    /// Closes its input: it sends the neutral state three times and ends.
    func stop() throws(BenchError) {
        input.close()
        if let thread, !thread.join(timeout: .seconds(5)) {
            throw .measurement("in-process controller did not stop at end of input")
        }
        if let child {
            if !child.wait(timeout: .seconds(5)) { child.stop(grace: .seconds(1)) }
            if let status = child.exitStatus, status != 0 {
                throw .measurement("\(child.label) exited with status \(status): \(child.stderr)")
            }
        }
    }
}
