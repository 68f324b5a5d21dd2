#if canImport(Glibc)
import Glibc
#endif
import Controller
import DriveRecord
import RemoteWire
import Testing

/// `--input replay:FILE`: the timetable (cut, speed, loops) and the source that plays it
/// against a clock passed in.
@Suite struct ReplayTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)
    static let right = ControllerState(angle: 0.7854, buttons: .forward)

    /// neutral at 0, forward at 0.5 s, right at 2 s, neutral at 3 s (and a report in between).
    static let recording = Recording(
        header: RecordHeader(kind: .drive, startUnixMillis: 0, input: "script:x"),
        entries: [
            RecordEntry(micros: 0, event: .state(angle: 0, buttons: 0)),
            RecordEntry(micros: 500_000, event: .state(angle: 0, buttons: 1)),
            RecordEntry(micros: 700_000, event: .robot(state: "driving", detail: "")),
            RecordEntry(micros: 2_000_000, event: .state(angle: 0.7854, buttons: 1 | 0x8000_0000)),
            RecordEntry(micros: 3_000_000, event: .state(angle: 0, buttons: 0)),
        ])

    @Test func theWholeRecordingPlaysAtItsOwnTimes() throws {
        let plan = try ReplayPlan(Self.recording, options: .init())
        #expect(plan.steps.map(\.at) == [.zero, .milliseconds(500), .seconds(2), .seconds(3)])
        // Bits the wire does not define are dropped.
        #expect(plan.steps.map(\.state) == [.neutral, Self.forward, Self.right, .neutral])
        #expect(plan.leadIn == .zero && plan.period == .seconds(3) && plan.total == .seconds(3))
    }

    @Test func speedTwoHalvesEveryInterval() throws {
        let plan = try ReplayPlan(Self.recording, options: .init(speed: 2))
        #expect(plan.steps.map(\.at) == [.zero, .milliseconds(250), .seconds(1), .milliseconds(1500)])
    }

    /// A cut starts with the state in effect at --from; one that starts while driving gets a
    /// lead-in of neutral (a fresh receiver waits for rest).
    @Test func aCutStartsWithTheStateInEffectAndEndsAtTo() throws {
        let plan = try ReplayPlan(Self.recording, options: .init(from: 1, to: 2.5))
        #expect(plan.steps.map(\.at) == [.zero, .seconds(1)])
        #expect(plan.steps.map(\.state) == [Self.forward, Self.right])
        #expect(plan.leadIn == ReplayPlan.standardLeadIn)
        #expect(plan.period == .milliseconds(1500))
    }

    @Test func loopsFollowEachOtherOnePeriodApart() throws {
        let plan = try ReplayPlan(Self.recording, options: .init(loops: 3, from: 1, to: 2.5))
        #expect((0..<3).map { plan.time(pass: $0, index: 0) } == [.milliseconds(200), .milliseconds(1700), .milliseconds(3200)])
        #expect(plan.total == .milliseconds(200 + 3000 + 1000))
    }

    @Test func aCutWithoutStatesIsRefused() {
        #expect(throws: RecordProblem.self) { try ReplayPlan(Self.recording, options: .init(from: 10)) }
    }

    /// `--from`/`--to` only have to be finite and positive on the command line: numbers past
    /// Int64's microseconds once trapped here. They are an empty cut, or the whole recording.
    @Test func aCutFarPastTheEndIsRefusedNotATrap() throws {
        for from in [1e13, 1e300, .greatestFiniteMagnitude] {
            #expect(throws: RecordProblem.self) { try ReplayPlan(Self.recording, options: .init(from: from)) }
        }
        let whole = try ReplayPlan(Self.recording, options: .init(from: -1e300, to: 1e300))
        #expect(whole.steps.map(\.at) == [.zero, .milliseconds(500), .seconds(2), .seconds(3)])
    }

    /// The source against a manual clock: neutral first, each state when due (late wake-ups
    /// apply what is due in order), the passes, then the end.
    @Test func theSourcePlaysThePlanAgainstTheClock() throws {
        let plan = try ReplayPlan(Self.recording, options: .init(loops: 2))
        let source = ReplaySource(plan: plan, name: "replay:x", prompt: false, notices: ["a warning"])
        let t0 = ContinuousClock.now
        #expect(source.start(now: t0) == [.notice("a warning"), .state(.neutral), .state(.neutral)])
        #expect(source.nextDeadline == t0 + .milliseconds(500))
        #expect(source.deadlinePassed(now: t0 + .milliseconds(499)).isEmpty)
        #expect(source.deadlinePassed(now: t0 + .milliseconds(2100)) == [.state(Self.forward), .state(Self.right)])
        // Pass 2 starts at 3 s, where pass 1's last state (neutral) is due too.
        #expect(source.deadlinePassed(now: t0 + .seconds(3)) == [.state(.neutral), .state(.neutral)])
        #expect(source.deadlinePassed(now: t0 + .seconds(6)) == [.state(Self.forward), .state(Self.right), .state(.neutral), .end(.scriptFinished)])
        #expect(source.nextDeadline == nil)
    }

    /// On a terminal: neutral and the prompt, Enter starts the countdown, then the plan.
    @Test func onATerminalEnterStartsACountdown() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let plan = try ReplayPlan(Self.recording, options: .init())
        let source = ReplaySource(plan: plan, name: "replay:x", prompt: true, input: fds[0])
        let t0 = ContinuousClock.now
        let start = source.start(now: t0)
        #expect(start.first == .state(.neutral))
        guard case .notice(let prompt)? = start.last else { Issue.record("no prompt"); return }
        #expect(prompt.contains("Place the robot at the start, then press Enter"))
        #expect(source.descriptor == fds[0] && source.nextDeadline == nil)
        _ = write(fds[1], "\n", 1)
        #expect(source.read(now: t0 + .seconds(5)) == [.notice("3…")])
        #expect(source.descriptor == nil)
        #expect(source.deadlinePassed(now: t0 + .seconds(6)) == [.notice("2…")])
        #expect(source.deadlinePassed(now: t0 + .seconds(7)) == [.notice("1…")])
        #expect(source.deadlinePassed(now: t0 + .seconds(8)) == [.notice("go"), .state(.neutral)])
        #expect(source.nextDeadline == t0 + .milliseconds(8500))
    }

    @Test func endOfInputWhileWaitingCancels() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let source = ReplaySource(plan: try ReplayPlan(Self.recording, options: .init()), name: "replay:x", prompt: true, input: fds[0])
        _ = source.start(now: .now)
        close(fds[1])
        #expect(source.read(now: .now) == [.end(.quit)])
    }

    @Test func replayIsAnInputForm() {
        #expect(InputSpec(argument: "replay:drive.jsonl") == .replay(path: "drive.jsonl"))
        #expect(InputSpec(argument: "replay:") == nil)
        #expect(InputSpec.forms.contains("replay:FILE"))
    }
}
