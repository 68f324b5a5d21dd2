import BoardLink
import ControlPlane
import Foundation
@testable import Receiver
import RemoteWire
import SystemIO
import Synchronization
import Testing

@Suite struct BoardSinkTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func append(_ line: String) { all.withLock { $0.append(line) } }
        var value: [String] { all.withLock { $0 } }
    }

    @Test func memoryBoardMergesPerAddressAndTracesOnlyChanges() {
        let lines = Lines()
        let board = MemoryBoardSink(safeState: [0x22: 0, 0x23: 0], trace: lines.append)
        board.setDesired([0x22: 0xC0, 0x23: 0x40])
        board.setDesired([0x22: 0xC0, 0x23: 0x40])          // no change: no line
        board.setDesired([0x0F: 255])                       // merged, motors kept
        board.setDesired([0x30: 1])                         // beyond the 36-byte map: ignored
        #expect(board.map == RunningReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255))
        #expect(board.calls == 4)
        #expect(board.writeSafeState(timeout: .seconds(1)))
        #expect(board.map == RunningReceiver.kitMap(led1: 255))
        #expect(lines.value == [
            "map " + Hex.string(RunningReceiver.kitMap(left: 0xC0, right: 0x40)),
            "map " + Hex.string(RunningReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255)),
            "map " + Hex.string(RunningReceiver.kitMap(led1: 255)),
        ])
    }

    @Test func safeStateIsTracedEvenWhenNothingChanges() {
        let lines = Lines()
        let board = MemoryBoardSink(safeState: [0x22: 0, 0x23: 0], trace: lines.append)
        #expect(board.writeSafeState(timeout: .zero))
        #expect(lines.value == ["map " + String(repeating: "00", count: 36)])
        #expect(board.safeStateWrites == 1)
    }

    @Test func boardEventsCrossThreadsAndWakeThePoller() throws {
        let inbox = try BoardEventInbox()
        #expect(try Poller.wait(for: inbox.descriptor, events: .readable, timeout: .zero).isEmpty)
        let thread = Thread {
            inbox.post(.disconnected(device: "sim", reason: "unplugged"))
            inbox.post(.reconnected(device: "sim"))
        }
        thread.start()
        let ready = try Poller.wait(for: inbox.descriptor, events: .readable, timeout: .seconds(5))
        #expect(ready.contains(.readable))
        // Both posts may not have landed yet when the first wakes us: collect until both are in.
        var events: [BoardEvent] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while events.count < 2 && ContinuousClock.now < deadline {
            _ = try Poller.wait(for: inbox.descriptor, events: .readable, timeout: .milliseconds(100))
            events += inbox.drain()
        }
        #expect(events == [.disconnected(device: "sim", reason: "unplugged"), .reconnected(device: "sim")])
        #expect(try Poller.wait(for: inbox.descriptor, events: .readable, timeout: .zero).isEmpty)
    }

    @Test func boardEventQueueIsBounded() throws {
        let inbox = try BoardEventInbox()
        for i in 0..<1000 { inbox.post(.connected(device: "d\(i)")) }
        let events = inbox.drain()
        #expect(events.count == inbox.capacity && inbox.capacity == 64)
        #expect(events.last == .connected(device: "d999"))
    }

    @Test func noticeLimiterAllowsABurstThenARateAndCountsWhatItDropped() {
        let clock = ManualClock()
        var limiter = NoticeLimiter(burst: 3, perSecond: 2)
        let t0 = clock.at(ms: 0)
        #expect(limiter.allow(at: t0) == 0)
        #expect(limiter.allow(at: t0) == 0)
        #expect(limiter.allow(at: t0) == 0)
        #expect(limiter.allow(at: t0) == nil)
        #expect(limiter.allow(at: t0) == nil)
        #expect(limiter.allow(at: clock.at(ms: 250)) == nil)       // half a token
        #expect(limiter.allow(at: clock.at(ms: 500)) == 3)         // one token; 3 dropped before it
        #expect(limiter.allow(at: clock.at(ms: 500)) == nil)
    }

    /// The limiter skips the bucket while it knows it is empty (issue 30c): it must still let
    /// through exactly the lines a plain bucket would, at irregular times down to microseconds.
    @Test func noticeLimiterLetsThroughExactlyWhatItsBucketWould() {
        let start = ContinuousClock.now
        var limiter = NoticeLimiter(burst: 20, perSecond: 5)
        var bucket = TokenBucket(rate: 5, burst: 20)
        var t = start
        var allowed = 0
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<50_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            t += .microseconds(Int64(state >> 33) % 400)          // 0–0.4 ms apart, bursts and gaps
            if state >> 60 == 0 { t += .milliseconds(300) }
            let byLimiter = limiter.allow(at: t) != nil
            #expect(byLimiter == bucket.take(now: t), "at \(t - start)")
            if byLimiter { allowed += 1 }
        }
        #expect(allowed > 20 && allowed < 50_000 / 10)
    }

    @Test func statusLineShowsOwnerStateMotorsRatesCountersAndFailsafe() throws {
        let clock = ManualClock()
        var engine = ReceiverEngine<SocketAddress>(mapping: .kit, policy: .first, timeout: .milliseconds(250))
        let owner = try SocketAddress.resolve(host: "127.0.0.1", port: 40000)[0]
        _ = engine.start()
        #expect(StatusText.line(engine: engine, now: clock.now)
                == "no controller · left 0 right 0 · bad 0 ignored 0 · READY: waiting for a resting state")
        _ = engine.datagram(StatePacket.encode(.neutral), length: 8, from: owner, at: clock.tick(ms: 0))
        let state = ControllerState(angle: 0.5, buttons: [.forward, .a])
        _ = engine.datagram(StatePacket.encode(state), length: 8, from: owner, at: clock.tick(ms: 10))
        _ = engine.datagram([0x7F, 0xC0, 0, 0, 0, 0, 0, 0], length: 8, from: owner, at: clock.tick(ms: 20))
        #expect(StatusText.line(engine: engine, now: clock.at(ms: 30))
                == "owner 127.0.0.1:40000 0/s · angle +0.50 · forward+a · left +103 right +25 · bad 1 ignored 0 · DRIVING")
        _ = engine.tick(at: clock.tick(ms: 260))
        #expect(StatusText.line(engine: engine, now: clock.at(ms: 1100))
                == "no controller · left 0 right 0 · bad 1 ignored 0 · FAILSAFE (silence): waiting for a resting state")
    }
}
