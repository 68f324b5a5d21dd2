import ControlPlane
import Discovery
import Logging

extension ControlCommand {
    /// The control session (hello, ping, robot-state reports), or nil for `--plain`: every
    /// controller says hello by default, named or not, so every driver hears back.
    static func controlSession(_ options: ControlOptions, logger: Logger) -> ControlSession? {
        guard !options.plain else { return nil }
        let name = options.displayName ?? HostName.current() ?? "controller"
        return ControlSession(.init(displayName: name, pairingCode: options.pairingCode,
                                    session: options.session?.session.text ?? "", secret: options.secret), logger: logger)
    }
}
