import ControlPlane
import Discovery
import Logging

extension ControlCommand {
    /// The control session for `--name`/`--pair`/`--secret`, or nil for a plain 8-byte sender.
    static func controlSession(_ options: ControlOptions, logger: Logger) -> ControlSession? {
        guard options.displayName != nil || options.pairingCode != nil || options.secret != nil else { return nil }
        let name = options.displayName ?? HostName.current() ?? "controller"
        return ControlSession(.init(displayName: name, pairingCode: options.pairingCode,
                                    session: options.session?.session.text ?? "", secret: options.secret), logger: logger)
    }
}
