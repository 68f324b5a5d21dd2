import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// The built `analog-remote receive` over loopback, watching the board's memory map.
/// Serialized: these tests start processes and measure loose timings on a shared machine.
@Suite(.serialized) struct ReceiverEndToEndTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)
    static let forwardMap = RunningReceiver.kitMap(left: 0xC0, right: 0x40)

    /// Lifts the start-up failsafe (a resting state), then drives forward until the board shows it.
    func startDriving(_ r: RunningReceiver, _ c: TestController) throws {
        try c.send(.neutral)
        try c.send(Self.forward)
        #expect(r.waitForMap { $0 == Self.forwardMap }, "board never showed forward: \(r.process.stdout)")
    }

    /// Golden table through the binary: each state in → the expected memory map on the board.
    /// A marker state with a map no row has (B only → LED2) separates the rows, so each wait
    /// proves that row was processed. MERGE NOTE: against board-sim, also check the `cmd` lines
    /// (`W 22 c040` for "forward, level" etc.).
    @Test(arguments: BoardUnderTest.allCases)
    func goldenStatesGiveTheExpectedMemoryMap(board: BoardUnderTest) throws {
        let r = try RunningReceiver(["--failsafe-ms", "2000"], board: board)
        let c = try TestController(port: r.port)
        try c.send(.neutral)
        let marker = ControllerState(angle: 0, buttons: .b)
        let markerMap = RunningReceiver.kitMap(led2: 255)
        for row in goldenMappings {
            try c.send(marker)
            #expect(r.waitForMap { $0 == markerMap }, "marker before \(row.name)")
            try c.send(row.state)
            let expected = RunningReceiver.kitMap(left: row.left, right: row.right, led1: row.led1, led2: row.led2)
            #expect(r.waitForMap { $0 == expected }, "\(row.name): board shows \(r.maps.last.map { Hex.string($0) } ?? "nothing")")
        }
        guard board == .boardSim else { return }
        // The exact commands on the wire: the probe, then the safe state first (all six outputs,
        // as three runs, each read back once), then only what changed, contiguous addresses
        // merged into one W.
        let commands = r.boardCommands
        #expect(commands.first == "R 00 55", "the probe first: \(commands.prefix(4))")
        let writes = commands.filter { $0.hasPrefix("W ") }
        #expect(Array(writes.prefix(3)) == ["W 09 0000", "W 0f 0000", "W 22 0000"], "\(commands.prefix(8))")
        #expect(writes.contains("W 22 c040"), "forward, level must be one merged write: \(commands)")
        // The sensor reads (`R 07 0b`, only while no write waits) come on their own schedule.
        let sensorReads = commands.filter { $0 == "R 07 0b" }
        let reads = commands.filter { $0.hasPrefix("R ") && $0 != "R 07 0b" }
        #expect(reads == ["R 00 55", "R 09 02", "R 0f 02", "R 22 02"],
                "the probe and one read-back per first write of an address: \(commands)")
        #expect(commands.count == writes.count + reads.count + sensorReads.count)
    }

    /// The controller stops → motors 0 after the failsafe timeout (never before; loosely soon
    /// after); moving states then change nothing until a resting one arrives.
    @Test(arguments: BoardUnderTest.allCases)
    func failsafeStopsTheMotorsAndWaitsForARestingState(board: BoardUnderTest) throws {
        let failsafe = Duration.milliseconds(500)
        let r = try RunningReceiver(["--failsafe-ms", "500"], board: board)
        let c = try TestController(port: r.port)
        try c.send(.neutral)
        let lastSent = ContinuousClock.now
        try c.send(Self.forward)
        #expect(r.waitForMap { $0 == Self.forwardMap })
        #expect(r.waitForMap(timeout: failsafe + .seconds(5)) { RunningReceiver.motorsStopped($0) })
        let elapsed = ContinuousClock.now - lastSent
        #expect(elapsed >= failsafe, "stopped after \(elapsed), before the failsafe timeout")
        #expect(elapsed < failsafe + .seconds(2), "stopped only after \(elapsed)")
        let stoppedAt = r.maps.count
        for _ in 0..<5 { try c.send(Self.forward) }
        try c.send(.neutral)
        let forwardA = ControllerState(angle: 0, buttons: [.forward, .a])
        try c.send(forwardA)
        #expect(r.waitForMap { $0 == RunningReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255) })
        // Between the stop and the final map, the motors never ran (the held states wrote nothing).
        let between = r.maps.dropFirst(stoppedAt).dropLast()
        #expect(between.allSatisfy(RunningReceiver.motorsStopped), "moved before a resting state: \(between.map { Hex.string($0) })")
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
        #expect(r.summary?["held"] == 5)
        #expect(r.summary?["failsafes"] == 1)
    }

    /// A second controller (over IPv6) cannot move the robot while the first drives, and takes
    /// over once the first has been silent past the timeout — after a resting state. (With no
    /// reclaim window: `--reclaim-s 0`; the window is pinned in ReceiverEngineTests.)
    @Test(arguments: BoardUnderTest.allCases)
    func secondControllerTakesOverOnlyAfterTheFirstFallsSilent(board: BoardUnderTest) throws {
        let r = try RunningReceiver(["--failsafe-ms", "1000", "--reclaim-s", "0"], board: board)
        let a = try TestController(port: r.port)
        let b = try TestController(port: r.port, host: "::1")
        try startDriving(r, a)
        let backward = ControllerState(angle: 0, buttons: .backward)
        let backwardMap = RunningReceiver.kitMap(left: 0x40, right: 0xC0)
        for _ in 0..<10 { try b.send(backward) }
        // A's next state proves B's (sent before it, same queue) were processed.
        try a.send(ControllerState(angle: 0, buttons: [.forward, .a]))
        #expect(r.waitForMap { $0 == RunningReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255) })
        #expect(!r.maps.contains(backwardMap))
        // A falls silent: motors stop (LED1 keeps its value), then B may drive after resting.
        #expect(r.waitForMap(timeout: .seconds(6)) { $0 == RunningReceiver.kitMap(led1: 255) })
        try b.send(backward)
        try b.send(.neutral)
        try b.send(backward)
        #expect(r.waitForMap { $0 == backwardMap })
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
        #expect(r.summary?["ignored"] == 10)
        #expect(r.summary?["sources"] == 2)
    }

    /// SIGTERM and SIGINT while the motors run: the board ends at rest, the exit is clean.
    @Test(arguments: [SIGTERM, SIGINT], BoardUnderTest.allCases)
    func signalLeavesTheMotorsStopped(signal: Int32, board: BoardUnderTest) throws {
        let r = try RunningReceiver(["--failsafe-ms", "5000"], board: board)
        let c = try TestController(port: r.port)
        try startDriving(r, c)
        r.process.signal(signal)
        #expect(r.process.wait() == 0)
        // board-sim answers a write before it prints the map it leads to: wait for that line
        // (the receiver is gone, so nothing can come after it).
        _ = r.waitForMap { $0 == RunningReceiver.kitMap() }
        let last = try #require(r.maps.last)
        #expect(RunningReceiver.motorsStopped(last), "board left at \(Hex.string(last))")
        #expect(last == RunningReceiver.kitMap(), "rest: motors 0 and LEDs released")
        #expect(r.summary != nil)
    }

    /// A receiver that dies of a fatal signal (a Swift trap is SIGTRAP/SIGILL; SIGSEGV, SIGABRT)
    /// cannot run its exit path, but its crash guard writes the safe state straight to the tty:
    /// the board-sim's motors end at 0 although nobody stopped them properly.
    @Test(arguments: [SIGSEGV, SIGABRT, SIGTRAP])
    func aCrashingReceiverStillStopsTheMotors(signal: Int32) throws {
        // The Swift runtime's backtracer (which runs after the guard) would spend seconds
        // symbolicating a debug build; the test needs only the death itself.
        let r = try RunningReceiver(["--failsafe-ms", "5000"], board: .boardSim, environment: ["SWIFT_BACKTRACE": "enable=no"])
        let c = try TestController(port: r.port)
        try startDriving(r, c)
        r.process.signal(signal)
        let status = r.process.wait()
        #expect(status != 0 && status != nil, "it must die of the signal")
        #expect(r.summary == nil, "no clean exit path ran")
        #expect(r.waitForMap { RunningReceiver.motorsStopped($0) }, "board left at \(r.maps.last.map { Hex.string($0) } ?? "?")")
    }

    /// 10,000 random datagrams of 0–1500 bytes (every 8-byte one with a NaN/infinite angle),
    /// then a flood of valid moving states from 100 other source ports, while an owner drives:
    /// no crash, no board write caused by any of them, and counters that add up with what was
    /// sent (minus what the kernel dropped, read from /proc/net/udp6; plus `limited`, what the
    /// per-source rate limit dropped).
    @Test(arguments: BoardUnderTest.allCases)
    func badInputAndFloodsNeverReachTheBoard(board: BoardUnderTest) throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix(seed: seed)
        let r = try RunningReceiver(["--failsafe-ms", "5000"], board: board)
        let owner = try TestController(port: r.port)
        try startDriving(r, owner)
        let mapsBefore = r.maps.count
        var ownerSent = 2, bad = 0, control = 0, flood = 0

        let garbage = try TestController(port: r.port, host: "::1")
        let nonFinite: [UInt32] = [0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001, 0x7FFF_FFFF, 0x7F80_0000, 0xFF80_0000]
        for chunk in 0..<(10_000 / 50) {
            for _ in 0..<50 {
                var size = Int.random(in: 0...1500, using: &rng)
                if Int.random(in: 0..<10, using: &rng) == 0 { size = 8 }     // ~10 % bad state packets
                var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if size == 8 {
                    let bits = nonFinite.randomElement(using: &rng)!
                    bytes[0] = UInt8(bits >> 24); bytes[1] = UInt8(truncatingIfNeeded: bits >> 16)
                    bytes[2] = UInt8(truncatingIfNeeded: bits >> 8); bytes[3] = UInt8(truncatingIfNeeded: bits)
                    bad += 1
                } else {
                    control += 1
                }
                try garbage.send(raw: bytes)
            }
            if chunk % 10 == 0 { try owner.send(Self.forward); ownerSent += 1 }
            #expect(r.waitUntilDrained(), "seed \(seed)")
        }
        let floodControllers = try (0..<100).map { _ in try TestController(port: r.port) }
        for round in 0..<20 {
            for c in floodControllers {
                try c.send(ControllerState(angle: Float.random(in: -1.5...1.5, using: &rng), buttons: [.backward, .b]))
                flood += 1
            }
            if round % 2 == 0 { try owner.send(Self.forward); ownerSent += 1 }
            #expect(r.waitUntilDrained(), "seed \(seed)")
        }
        let drops = try #require(r.socketStats()).drops
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0, "seed \(seed): \(r.process.stderr.suffix(500))")
        let s = try #require(r.summary, "no summary: \(r.process.stdout.suffix(300))")

        let sent = ownerSent + bad + control + flood
        #expect(s["packets"]! + drops == sent, "seed \(seed) drops \(drops)")
        #expect(s["packets"] == s["state"]! + s["bad"]! + s["control"]! + s["limited"]!)
        #expect(s["state"] == s["applied"]! + s["held"]! + s["ignored"]!)
        // The garbage comes from one source far faster than 2000/s: the rate limit drops part of it
        // undecoded (Protocol.md §7.4); the owner and the 100 flooders stay under it.
        #expect(s["limited"]! > 0, "seed \(seed)")
        if drops == 0 {
            #expect(s["bad"]! + s["control"]! + s["limited"]! == bad + control, "seed \(seed)")
            #expect(s["bad"]! <= bad && s["control"]! <= control, "seed \(seed)")
            #expect(s["ignored"] == flood && s["applied"] == ownerSent, "seed \(seed)")
            #expect(s["sources"] == 102)
        }
        #expect(s["evicted"] == 0)
        // After the owner's forward, the only board changes are the two at exit (rest, safe state).
        // (board-sim prints a map only when a write changes it: the safe state may change nothing.)
        let after = Array(r.maps.dropFirst(mapsBefore))
        let expectedChanges = board == .inMemory ? 2...2 : 1...2
        #expect(expectedChanges.contains(after.count) && after.allSatisfy { $0 == RunningReceiver.kitMap() },
                "seed \(seed): \(after.count) board changes after the owner's forward, e.g. \(after.prefix(3).map { Hex.string($0) })")
    }

    // MARK: Refusals — one stderr line, the documented exit code, the board untouched.

    @Test func badMappingFileIsRefusedBeforeTheBoardIsTouched() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-map-\(getpid()).toml").path
        try "[drive]\nspeed = 200\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--trace-board", "--map", path])
        #expect(p.wait() == 2)
        #expect(p.stderr == "analog-remote: \(path): drive.speed: got the integer 200; allowed: an integer 0…127\n")
        #expect(p.stdout.isEmpty, "no port line, no board trace: \(p.stdout)")
    }

    /// The three configuration cases of issue 19 through the binary: one line, exit 2, no port
    /// opened, no board touched — and a FIFO does not hang the receiver in open(2).
    /// `abort`: a header TOMLKit would abort the process on (exit 134 before) — one line, exit 2.
    @Test(arguments: ["nul", "comma", "fifo", "abort"])
    func strictConfigurationFiles(kind: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strict-map-\(getpid())-\(kind)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path: String
        let problem: String
        switch kind {
        case "nul":
            path = dir.appendingPathComponent("m.toml").path
            try Data("[drive]\nspeed = 64\n\u{0}[drive]\nspeed = 999\n".utf8).write(to: URL(fileURLWithPath: path))
            problem = "a NUL byte at offset 19 (line 3); allowed: text without NUL bytes"
        case "comma":
            path = dir.appendingPathComponent("m.json").path
            try Data("{\"drive\": {\"speed\": 64},}\n".utf8).write(to: URL(fileURLWithPath: path))
            problem = "line 1: JSON syntax error: expected a \"key\" (a trailing comma is not allowed)"
        case "abort":
            path = dir.appendingPathComponent("m.toml").path
            try Data("[drive]\nspeed = 64\n[?x]\n".utf8).write(to: URL(fileURLWithPath: path))
            problem = "line 3: a table header must start with a key name or a quoted key, e.g. [drive] (not valid TOML)"
        default:
            path = dir.appendingPathComponent("x.toml").path
            #expect(mkfifo(path, 0o600) == 0)
            problem = "a FIFO, not a regular file; allowed: a regular file"
        }
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--trace-board", "--map", path])
        let status = p.wait(timeout: .seconds(10))
        #expect(status == 2, "exit status \(status.map(String.init) ?? "none: still running (hung)")")
        #expect(p.stderr == "analog-remote: \(path): \(problem)\n")
        #expect(p.stdout.isEmpty, "no port line, no board trace: \(p.stdout)")
    }

    @Test func shippedExampleMappingRuns() throws {
        let r = try RunningReceiver(["--map", Paths.repositoryFile("config-examples/motors-map.toml").path])
        let c = try TestController(port: r.port)
        try startDriving(r, c)
    }

    /// A range error of an option is a usage error (64), like `control --rate 0`, found by
    /// `validate()` before the port is bound or anything announced.
    @Test(arguments: ["10", "49", "5001", "-5"])
    func failsafeOutOfRangeIsAUsageError(value: String) throws {
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--failsafe-ms=\(value)"])
        #expect(p.wait() == 64)
        #expect(p.stderr == "analog-remote: --failsafe-ms \(value) is out of range; allowed: 50…5000 milliseconds\n")
        #expect(p.stdout.isEmpty)
    }

    @Test func portInUseIsANetworkError() throws {
        let taken = try UDPSocket.bind(port: 0)
        let port = try taken.localAddress().port
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "\(port)"])
        #expect(p.wait() == 4)
        #expect(p.stderr == "analog-remote: udp port \(port): bind: address already in use (another receiver on this machine? choose another --port, or --port 0 for any free port)\n")
        #expect(p.stdout.isEmpty)
    }

    /// A board that is not there: one line naming the device and what to do, exit 3, and the
    /// UDP port never opened (no "receiving on" line).
    @Test func unavailableBoardIsADeviceError() throws {
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:/dev/analog-remote-test-none"])
        #expect(p.wait() == 3)
        #expect(p.stderr == "analog-remote: serial:/dev/analog-remote-test-none: no such device (is the board plugged in? `analog-remote boards` lists candidates)\n")
        #expect(p.stdout.isEmpty)
    }

    @Test(arguments: ["usb:/dev/ttyACM0", "serial:", "bluetooth"])
    func malformedBoardSpecIsAUsageError(spec: String) throws {
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", spec])
        #expect(p.wait() == 64)
        #expect(p.stderr.hasPrefix("analog-remote: "))
        #expect(p.stderr.filter { $0 == "\n" }.count == 1, "\(p.stderr)")
        #expect(p.stdout.isEmpty)
    }

    /// The simulated board over MIDI framing through a tty, end to end: same memory map.
    @Test func drivesABoardOverMIDIFraming() throws {
        let sim = try ChildProcess(analogRemote: ["board-sim", "--trace", "--quiet", "--midi", "--firmware", "motors"])
        #expect(sim.waitForOutput { out, _ in out.contains("\n") })
        let path = try #require(sim.stdout.split(separator: "\n").first)
        let r = try RunningReceiver(["--failsafe-ms", "5000", "--board", "midi-serial:\(path)"], board: .inMemory)
        let c = try TestController(port: r.port)
        try startDriving(r, c)
        #expect(sim.waitForOutput { out, _ in RunningReceiver.maps(in: out).last == Self.forwardMap },
                "board-sim over MIDI never showed forward: \(sim.stdout.suffix(400))")
    }
}
