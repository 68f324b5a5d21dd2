#if canImport(Glibc)
import Glibc
#endif
import Console
import Foundation
import Controller
import Gamepad
import RemoteWire
import Synchronization
import SystemIO
import Testing

/// `control --input gamepad` as built: the controller's real send loop with ``GamepadInput``,
/// a virtual pad, and the packets on a UDP socket. In the serialized SDL suite (one SDL user
/// per process).
extension GamepadSourceTests {
    final class LoopEnd: Sendable {
        let reason = Mutex<EndReason?>(nil)
    }

    @Test func controlLoopDrivesFromAVirtualPadAndSurvivesUnplugging() throws {
        var options = GamepadSource.Options(selector: .name("ARLoop"), config: GamepadConfig())
        options.hints = PadRig.testHints
        let pads = try GamepadSource(options)
        let capture = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let address = try capture.localAddress()
        let destination = try Destination(.init(address: address, label: "test"))
        // A gamepad input never ends by itself; the test stops the loop as a user would, with a
        // signal (SIGUSR2: nothing else in the test process uses it).
        let watcher = try SignalWatcher(signals: [SIGUSR2])
        let end = LoopEnd()
        Thread {
            // The input lives on the loop's thread, as in `control`.
            let loop = SendLoop(source: GamepadInput(source: pads, terminalKeys: false), destination: destination, schedule: .init(rate: 5),
                                signals: watcher, status: StatusLine(quiet: true))
            let reason = try? loop.run()
            end.reason.withLock { $0 = reason }
        }.start()

        var buffer = [UInt8](repeating: 0, count: 64)
        var seen: [String] = []
        func waitFor(_ hex: String) throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let got = try capture.receive(into: &buffer, timeout: .milliseconds(100)) {
                    seen.append(Hex.string(buffer[..<got.length]))
                    if seen.last == hex { return true }
                }
            }
            return false
        }
        #expect(try waitFor(Self.neutral), "no gamepad yet: neutral")
        let pad = try pads.attachVirtualPad(name: "ARLoop pad")
        try pads.updateVirtualPad(pad, axes: [.leftX: 32767], buttons: [.dpadUp: true])
        #expect(try waitFor("3f490fdb00000001"), "full right stick + d-pad up: π/4 and forward")
        try pads.detachVirtualPad(pad)
        #expect(try waitFor(Self.neutral), "unplugged: neutral at once")
        // Plugged back in with the stick still pushed: nothing moves until it is released.
        seen = []
        let again = try pads.attachVirtualPad(name: "ARLoop pad", axes: [.leftX: 32767])
        try pads.updateVirtualPad(again, axes: [.leftX: 0])
        try pads.updateVirtualPad(again, buttons: [.south: true])
        #expect(try waitFor("0000000000000004"), "after a neutral input, A drives again")
        #expect(!seen.contains("3f490fdb00000000"), "the pushed stick must not drive before a neutral input: \(seen)")
        #expect(end.reason.withLock { $0 } == nil, "unplugging must not end the controller")
        kill(getpid(), SIGUSR2)
        var last: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while end.reason.withLock({ $0 }) == nil || last.count < 3, ContinuousClock.now < deadline {
            if let got = try capture.receive(into: &buffer, timeout: .milliseconds(50)) {
                last = Array((last + [Hex.string(buffer[..<got.length])]).suffix(3))
            }
        }
        #expect(end.reason.withLock { $0 } == .signal(SIGUSR2))
        #expect(last == [Self.neutral, Self.neutral, Self.neutral], "the way out is neutral three times")
    }
}

extension GamepadSourceTests {
    /// Start + Back held together quit the controller (neutral ×3, a requested stop).
    @Test func startAndBackTogetherQuit() throws {
        var options = GamepadSource.Options(selector: .name("ARQuit"), config: GamepadConfig())
        options.hints = PadRig.testHints
        let pads = try GamepadSource(options)
        let capture = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let destination = try Destination(.init(address: try capture.localAddress(), label: "test"))
        let watcher = try SignalWatcher(signals: [SIGUSR2])
        let end = LoopEnd()
        Thread {
            let loop = SendLoop(source: GamepadInput(source: pads, terminalKeys: false), destination: destination,
                                schedule: .init(rate: 5), signals: watcher, status: StatusLine(quiet: true))
            let reason = try? loop.run()
            end.reason.withLock { $0 = reason }
        }.start()
        var buffer = [UInt8](repeating: 0, count: 64)
        func waitFor(_ hex: String) throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let got = try capture.receive(into: &buffer, timeout: .milliseconds(100)), Hex.string(buffer[..<got.length]) == hex { return true }
            }
            return false
        }
        let pad = try pads.attachVirtualPad(name: "ARQuit pad")
        try pads.updateVirtualPad(pad, buttons: [.start: true])
        #expect(try waitFor("0000000000000100"), "Start alone is just the start bit")
        try pads.updateVirtualPad(pad, buttons: [.start: true, .back: true])
        let deadline = ContinuousClock.now + .seconds(10)
        while end.reason.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(10_000) }
        #expect(end.reason.withLock { $0 } == .quit)
        if end.reason.withLock({ $0 }) == nil { kill(getpid(), SIGUSR2) }
    }
}
