import BoardFirmware
import BoardProtocol
import BoardSimulator

/// Item 5: how old is the state a board holds once its command completes, when the input
/// changes faster than the serial link can carry commands? A deterministic discrete-event
/// simulation on a manual clock — no sleeping, no threads — built from the real parts:
///
/// - the real writer under test (``ConflatingWriter`` wraps the board link's `MemoryMapWriter`;
///   ``FIFOWriter`` is the naive one, built only for this comparison);
/// - the real host session (`BoardSession`: one command in flight, reply parsing);
/// - the real firmware model (`SimulatedBoard`: per-character echo, `\r\n`, prompt `\r\n>`);
/// - the wire: every byte takes `WireTiming.byteTime` on its wire, one wire each way (full
///   duplex, like `board-sim --baud`): host → board bytes arrive one byte-time apart, and the
///   board's output leaves one byte-time apart, each byte no earlier than it was produced.
///
/// Input: a new state every `inputPeriod`, each one changing both motor bytes (one `W 22 xxyy`
/// line, 10 bytes; with the echo, `\r\n` and prompt, a command takes 16 byte-times: 16.7 ms at
/// 9600 baud, so the link carries at most 60 commands a second).
///
/// The age of a completed command is the time its prompt arrived minus the time the newest
/// state it carries was given to the writer.
package enum FreshnessSimulation {
    package struct Result: Sendable, Codable, Hashable {
        package let writer: String
        package let baud: Int
        package let inputHz: Double
        package let seconds: Double
        /// States given to the writer, and commands the board completed in the window.
        package let states: Int
        package let completed: Int
        /// States overwritten before they went out (conflation only: a FIFO skips nothing).
        package let skipped: Int
        /// States not completed when the window ended (queued, or on the wire).
        package let queuedAtEnd: Int
        /// Age of the state when its command completed (ns).
        package let age: Summary?
        /// Ages in completion order (for tests; not written to JSON).
        package let ages: [Int64]

        enum CodingKeys: String, CodingKey {
            case writer, baud, inputHz, seconds, states, completed, skipped, queuedAtEnd, age
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            writer = try c.decode(String.self, forKey: .writer)
            baud = try c.decode(Int.self, forKey: .baud)
            inputHz = try c.decode(Double.self, forKey: .inputHz)
            seconds = try c.decode(Double.self, forKey: .seconds)
            states = try c.decode(Int.self, forKey: .states)
            completed = try c.decode(Int.self, forKey: .completed)
            skipped = try c.decode(Int.self, forKey: .skipped)
            queuedAtEnd = try c.decode(Int.self, forKey: .queuedAtEnd)
            age = try c.decodeIfPresent(Summary.self, forKey: .age)
            ages = []
        }

        init(writer: String, baud: Int, inputHz: Double, seconds: Double, states: Int, completed: Int, skipped: Int,
             queuedAtEnd: Int, ages: [Int64]) {
            self.writer = writer
            self.baud = baud
            self.inputHz = inputHz
            self.seconds = seconds
            self.states = states
            self.completed = completed
            self.skipped = skipped
            self.queuedAtEnd = queuedAtEnd
            self.ages = ages
            self.age = Summary(ages)
        }
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }

    /// The motor values of input state `k`: both bytes change from one state to the next, and
    /// neither is ever 0 (the safe state the link starts from).
    package static func values(_ k: Int) -> [UInt8: UInt8] {
        MemoryMapProfile.kit.motors(left: Int8(k % 127 + 1), right: Int8(3 * k % 127 + 1))
    }

    /// Runs `writer` with `count` input states, `inputPeriod` apart (ns), on a link of `baud`.
    /// The window ends with the last input period; commands still queued are counted, not aged.
    package static func run<W: SimulatedWriter>(_ writer: W, baud: Int, inputPeriod: Int64, count: Int) -> Result {
        var writer = writer
        let byteTime = nanoseconds(WireTiming(baud: baud).byteTime)
        let base = ContinuousClock.now
        func instant(_ t: Int64) -> ContinuousClock.Instant { base + .nanoseconds(t) }

        var session = BoardSession(replyTimeout: .seconds(3600))
        var board = SimulatedBoard(profile: .kit, framing: .text)
        _ = board.takeOutput()   // boot prompt
        var toBoard: [(at: Int64, byte: UInt8)] = [], toBoardHead = 0, toBoardFree: Int64 = 0
        var toHost: [(at: Int64, byte: UInt8)] = [], toHostHead = 0, toHostFree: Int64 = 0
        var inFlight: Outstanding?
        var ages: [Int64] = []
        var completed = 0
        let end = Int64(count) * inputPeriod
        var nextInput = 0

        func pump(at t: Int64) {
            guard session.isIdle, inFlight == nil, let (command, stateTime) = writer.nextCommand() else { return }
            let line = session.start(command, now: instant(t))
            inFlight = Outstanding(stateTime: stateTime)
            for b in line {
                toBoardFree = max(toBoardFree, t) + byteTime
                toBoard.append((toBoardFree, b))
            }
        }

        while true {
            let inputAt = nextInput < count ? Int64(nextInput) * inputPeriod : Int64.max
            let boardAt = toBoardHead < toBoard.count ? toBoard[toBoardHead].at : Int64.max
            let hostAt = toHostHead < toHost.count ? toHost[toHostHead].at : Int64.max
            let t = min(inputAt, boardAt, hostAt)
            if t >= end || t == Int64.max { break }
            if hostAt == t {
                let byte = toHost[toHostHead].byte
                toHostHead += 1
                for event in session.receive([byte], now: instant(t)) {
                    if case .completed = event, let outstanding = inFlight {
                        writer.succeeded()
                        if let stateTime = outstanding.stateTime { ages.append(t - stateTime) }
                        completed += 1
                        inFlight = nil
                    }
                }
                pump(at: t)
            } else if boardAt == t {
                let byte = toBoard[toBoardHead].byte
                toBoardHead += 1
                board.receive([byte])
                for b in board.takeOutput() {
                    toHostFree = max(toHostFree, t) + byteTime
                    toHost.append((toHostFree, b))
                }
            } else {
                writer.setDesired(values(nextInput), at: t)
                nextInput += 1
                pump(at: t)
            }
        }
        return Result(writer: writer.name, baud: baud, inputHz: 1e9 / Double(inputPeriod), seconds: Double(end) / 1e9,
                      states: nextInput, completed: completed, skipped: writer.skipped,
                      queuedAtEnd: writer.queued + (inFlight?.stateTime == nil ? 0 : 1),
                      ages: ages)
    }
}

/// The command on the wire, with the time of the newest state it carries (nil: none).
struct Outstanding {
    let stateTime: Int64?
}

/// A board writer as the simulation drives it: values in (with the time of the state), commands
/// out one at a time, each acknowledged before the next.
package protocol SimulatedWriter {
    var name: String { get }
    mutating func setDesired(_ values: [UInt8: UInt8], at time: Int64)
    /// The next command and the time of the newest state it carries (nil: it carries none).
    mutating func nextCommand() -> (BoardCommand, Int64?)?
    mutating func succeeded()
    /// States overwritten before they were sent.
    var skipped: Int { get }
    /// States waiting to be sent.
    var queued: Int { get }
}

/// The board link's writer, unchanged: latest value wins, one command outstanding.
package struct ConflatingWriter: SimulatedWriter {
    package var writer: MemoryMapWriter
    private var latest: Int64?
    private var latestSent = true
    package private(set) var skipped = 0
    package var name: String { "conflating (MemoryMapWriter)" }
    package var queued: Int { latestSent ? 0 : 1 }

    /// The link is open and its safe state already confirmed (the start-up writes are not the subject).
    package init(profile: MemoryMapProfile = .kit) {
        writer = MemoryMapWriter(profile: profile)
        writer.connected()
        while writer.nextCommand() != nil { writer.succeeded() }
    }

    package mutating func setDesired(_ values: [UInt8: UInt8], at time: Int64) {
        if !latestSent { skipped += 1 }
        writer.setDesired(values)
        latest = time
        latestSent = false
    }

    package mutating func nextCommand() -> (BoardCommand, Int64?)? {
        guard let command = writer.nextCommand() else { return nil }
        latestSent = true
        return (command, latest)
    }

    package mutating func succeeded() { writer.succeeded() }
}

/// The naive writer: every state becomes its own command, sent in arrival order.
package struct FIFOWriter: SimulatedWriter {
    private var queue: [(BoardCommand, Int64)] = []
    private var head = 0
    package var name: String { "first-in-first-out" }
    package var skipped: Int { 0 }
    package var queued: Int { queue.count - head }

    package init() {}

    package mutating func setDesired(_ values: [UInt8: UInt8], at time: Int64) {
        let addresses = values.keys.sorted()
        var start = 0
        // One `W` per contiguous run of addresses, like the conflating writer would send.
        while start < addresses.count {
            var stop = start + 1
            while stop < addresses.count && addresses[stop] == addresses[stop - 1] &+ 1 { stop += 1 }
            queue.append((.write(address: addresses[start], bytes: addresses[start..<stop].map { values[$0]! }), time))
            start = stop
        }
    }

    package mutating func nextCommand() -> (BoardCommand, Int64?)? {
        guard head < queue.count else { return nil }
        let (command, time) = queue[head]
        head += 1
        return (command, time)
    }

    package mutating func succeeded() {}
}
