#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import ControlPlane
import Logging
import SystemIO

/// What `analog-remote control` was asked to do (parsed and validated by the CLI).
package struct ControlOptions: Sendable {
    /// `HOST:PORT`, `[IPv6]:PORT`.
    package var peer: String
    /// nil = the default for what stdin is.
    package var input: InputSpec?
    /// Packets per second while nothing changes (1…1000).
    package var rate: Double
    /// `--config FILE`: the controller config (the gamepad mapping lives in its `[gamepad]` table,
    /// the MIDI mapping in `[midi]`).
    package var configPath: String?
    /// `--session`: find the receiver by DNS-SD instead of `peer` (which is then ignored).
    package var session: SessionTarget?

    /// Classroom (Protocol.md §7.4): with a display name or a pairing code the controller says
    /// hello; with neither it is a plain 8-byte sender.
    package var displayName: String?
    package var pairingCode: String?
    /// `--secret WORDS` (`--accept secret`): prove the robot's secret, seal every datagram.
    package var secret: RobotSecret?
    /// `--plain`: no control messages at all (the original 8-byte sender, for old receivers).
    package var plain = false
    /// `--steer`: the keyboard's steering keys spring back to centre (default) or latch.
    package var steering: KeyboardModel.Steering = .centre
    /// `--record FILE`: write what is sent and heard (``DriveRecorder``).
    package var recordPath: String?
    /// `--speed`, `--loop`, `--from`, `--to` for `--input replay:FILE`.
    package var replay = ReplayOptions()

    package init(peer: String, input: InputSpec?, rate: Double, configPath: String? = nil) {
        self.peer = peer
        self.input = input
        self.rate = rate
        self.configPath = configPath
    }
}

/// `analog-remote control`: resolve the peer, build the input source, run the send loop, and
/// turn the way it ended into an exit status.
package enum ControlCommand {
    package static func run(_ options: ControlOptions, status: StatusLine) throws -> CommandOutcome {
        let logger = Logger(label: "control")
        let destination: Destination
        let follower: SessionFollower?
        if let target = options.session {
            // Browsing starts first: no mDNS responder is exit status 5 before anything else.
            destination = try Destination(nil)
            follower = try SessionFollower(target: target, destination: destination, logger: logger, status: status)
        } else {
            let address: SocketAddress
            do {
                address = try SocketAddress.resolve(options.peer)
            } catch {
                throw CommandFailure("--peer \(options.peer): cannot resolve \(error.host): \(error.reason) (check the name, or give an IP address)",
                                     kind: .networkUnavailable)
            }
            destination = try Destination(Destination.Peer(address: address, label: options.peer))
            follower = nil
        }
        defer { follower?.stop() }
        let spec = options.input ?? .default(stdinIsTerminal: isatty(STDIN_FILENO) == 1)
        let source = try makeSource(spec, configPath: options.configPath, steering: options.steering, replay: options.replay,
                                    prompt: isatty(STDIN_FILENO) == 1)
        if let follower {
            try follower.chooseAtStart(interactive: isatty(STDIN_FILENO) == 1)
        }

        // A closed stderr pipe must not kill us before the neutral packets are out.
        _ = signal(SIGPIPE, SIG_IGN)
        FatalSignalGuard.install()
        let runner = try LoopRunner<Never>(stopOn: StopSignals.terminal)
        logger.debug("sending", metadata: ["peer": "\(destination.current?.description ?? "(session)")", "rate": "\(options.rate)", "input": "\(source.name)"])

        let session = controlSession(options, logger: logger)
        let recorder = try makeRecorder(options, input: source.name, destination: destination, session: session, logger: logger)
        let guardian = source is ReplaySource ? session.map(ReplayGuard.init) : nil
        var loop = DriverLoop.make(source: source, destination: destination, rate: options.rate, signals: runner.stopToken,
                                   status: status, session: session, follower: follower, extras: [recorder, guardian])
        if let recorder { loop.onSent = { recorder.sent($0, at: $1) } }
        let reason: EndReason
        do {
            reason = try loop.run()
        } catch {
            recorder?.end(.deviceLost("\(error)"))
            throw error
        }
        recorder?.end(reason)
        logger.debug("stopped", metadata: ["reason": "\(reason)"])
        if let failure = follower?.failure { throw failure }
        if case .refused(let why) = reason, let kind = reason.failureKind { throw CommandFailure(why, kind: kind) }
        if case .deviceLost(let why) = reason, let kind = reason.failureKind {
            throw CommandFailure("\(why); sent the neutral state and stopped", kind: kind)
        }
        // Stopped on request, but nothing ever answered: say so and end non-zero (README "Exit codes").
        if reason.failureKind == nil, let why = loop.companion?.endFailure {
            throw CommandFailure(why, kind: .networkUnavailable)
        }
        return .done
    }

    /// Builds the source for an `--input` choice. Failures that happen before anything is sent
    /// (a bad script, an unavailable device) are thrown as ``CommandFailure``.
    package static func makeSource(_ spec: InputSpec, configPath: String? = nil,
                                  steering: KeyboardModel.Steering = .centre, replay: ReplayOptions = .init(),
                                  prompt: Bool = false) throws -> any InputSource {
        switch spec {
        case .stdin:
            return StdinSource()
        case .keyboard:
            return KeyboardSource(steering: steering)
        case .script(let path):
            do {
                return ScriptSource(script: try Script.load(path: path), name: "script:\(path)")
            } catch {
                throw CommandFailure("script \(error)", kind: .badConfiguration)
            }
        case .gamepad(let which):
            return try GamepadInput(selector: which, configPath: configPath)
        case .midi(let spec):
            return try MIDIInput(spec: spec, configPath: configPath)
        case .replay(let path):
            return try makeReplaySource(path: path, options: replay, prompt: prompt)
        }
    }
}
