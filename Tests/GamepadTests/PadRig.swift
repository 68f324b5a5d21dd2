import Gamepad
import RemoteWire
import SystemIO

/// A gamepad source, plus the smallest controller send loop there is: every `.state` event
/// becomes one 8-byte datagram to a UDP socket on 127.0.0.1, which the rig reads back. Tests
/// check the packets exactly as a receiver would get them. Single-threaded: the test thread
/// runs the loop; SDL stays on the source's own thread.
final class PadRig {
    let source: GamepadSource
    let receiver: UDPSocket
    let sender: UDPSocket
    let target: SocketAddress
    /// Every datagram received, as hex (`3f490fdb00000004`).
    private(set) var packets: [String] = []
    private(set) var statuses: [GamepadStatus] = []
    private(set) var notices: [String] = []
    /// A name no real pad has; the selector matches it.
    let padName: String

    /// Hints the tests run SDL with: no HIDAPI scan of real devices (nothing to find in a
    /// sandbox, and a developer's own pad must not be touched by tests).
    static let testHints = ["SDL_JOYSTICK_HIDAPI": "0"]

    init(config: GamepadConfig = GamepadConfig(), selector: GamepadSelector? = nil) throws {
        padName = "ARTest-\(UInt32.random(in: 0...UInt32.max))"
        var options = GamepadSource.Options(selector: selector ?? .name(padName), config: config)
        options.hints = Self.testHints
        source = try GamepadSource(options)
        receiver = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        target = try receiver.localAddress()
        sender = try UDPSocket.sender(for: target)
    }

    deinit { source.close() }

    var status: GamepadStatus? { statuses.last }

    /// Runs the send loop until `done` holds (true) or `timeout` passes (false).
    @discardableResult
    func run(timeout: Duration = .seconds(10), until done: (PadRig) -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            for event in source.events() {
                switch event {
                case .state(let state): try sender.send(StatePacket.encode(state), to: target)
                case .status(let status): statuses.append(status)
                case .notice(let line): notices.append(line)
                }
            }
            while let got = try receiver.receive(into: &buffer) {
                packets.append(Hex.string(buffer[..<got.length]))
            }
            if done(self) { return true }
            let now = ContinuousClock.now
            if now >= deadline { return false }
            _ = try Poller.wait([(source.descriptor, .readable), (receiver.descriptor.rawValue, .readable)],
                                until: min(deadline, now + .milliseconds(50)))
        }
    }

    /// Runs until `count` packets have arrived.
    func waitForPackets(_ count: Int) throws -> Bool { try run { $0.packets.count >= count } }

    func waitForStatus(_ matches: (GamepadStatus) -> Bool) throws -> Bool {
        try run { rig in rig.status.map(matches) ?? false }
    }

    func attach(suffix: String = "", axes: [PadAxis: Int16] = [:], buttons: [PadButton: Bool] = [:]) throws -> VirtualPad {
        try source.attachVirtualPad(name: padName + suffix, axes: axes, buttons: buttons)
    }
}

extension GamepadStatus {
    var isNoGamepad: Bool { if case .noGamepad = self { true } else { false } }
    var isWaitingForNeutral: Bool { if case .waitingForNeutral = self { true } else { false } }
    var isEnableNotHeld: Bool { if case .enableNotHeld = self { true } else { false } }
    var isStopped: Bool { if case .stopped = self { true } else { false } }
}
