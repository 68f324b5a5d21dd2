#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Logging
import SystemIO

/// What `analog-remote control` was asked to do (parsed and validated by the CLI).
public struct ControlOptions: Sendable {
    /// `HOST:PORT`, `[IPv6]:PORT`.
    public var peer: String
    /// nil = the default for what stdin is.
    public var input: InputSpec?
    /// Packets per second while nothing changes (1…1000).
    public var rate: Double

    /// Classroom (Protocol.md §7.4): with a display name or a pairing code the controller says
    /// hello; with neither it is a plain 8-byte sender.
    public var displayName: String?
    public var pairingCode: String?

    public init(peer: String, input: InputSpec?, rate: Double) {
        self.peer = peer
        self.input = input
        self.rate = rate
    }
}

/// `analog-remote control`: resolve the peer, build the input source, run the send loop, and
/// turn the way it ended into an exit status.
public enum ControlCommand {
    public static func run(_ options: ControlOptions, status: StatusLine) throws -> ExitStatus {
        let logger = Logger(label: "control")
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(options.peer)
        } catch {
            throw UserFacingError("--peer \(options.peer): cannot resolve \(error.host): \(error.reason) (check the name, or give an IP address)",
                                  status: .networkUnavailable)
        }
        let destination = try Destination(Destination.Peer(address: address, label: options.peer))
        let spec = options.input ?? .default(stdinIsTerminal: isatty(STDIN_FILENO) == 1)
        let source = try makeSource(spec)

        // A closed stderr pipe must not kill us before the neutral packets are out.
        _ = signal(SIGPIPE, SIG_IGN)
        FatalSignalGuard.install()
        let signals = try SignalWatcher(signals: [SIGINT, SIGTERM, SIGHUP])
        logger.debug("sending", metadata: ["peer": "\(address)", "rate": "\(options.rate)", "input": "\(source.name)"])

        var loop = SendLoop(source: source, destination: destination, schedule: .init(rate: options.rate),
                            signals: signals, status: status)
        loop.companion = controlSession(options, logger: logger)
        let reason = try loop.run()
        logger.debug("stopped", metadata: ["reason": "\(reason)"])
        if case .refused(let why) = reason { throw UserFacingError(why, status: reason.exitStatus) }
        if case .deviceLost(let why) = reason {
            throw UserFacingError("\(why); sent the neutral state and stopped", status: reason.exitStatus)
        }
        return reason.exitStatus
    }

    /// Builds the source for an `--input` choice. Failures that happen before anything is sent
    /// (a bad script, an unavailable device) are thrown as ``UserFacingError``.
    public static func makeSource(_ spec: InputSpec) throws -> any InputSource {
        switch spec {
        case .stdin:
            return StdinSource()
        case .keyboard:
            return KeyboardSource()
        case .script(let path):
            do {
                return ScriptSource(script: try Script.load(path: path), name: "script:\(path)")
            } catch {
                throw UserFacingError("script \(error)", status: .badConfiguration)
            }
        case .gamepad:
            // Hook for the gamepad work: return its InputSource here.
            throw UserFacingError("--input gamepad is not available in this build yet; use keyboard, stdin or script:FILE",
                                  status: .deviceUnavailable)
        }
    }
}
