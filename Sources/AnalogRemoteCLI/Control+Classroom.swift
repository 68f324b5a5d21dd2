import ArgumentParser
import ControlPlane

extension Control {
    /// `--name` and `--pair` (Protocol.md §7.4): both travel as str8, so at most 255 bytes.
    func validateClassroom() throws {
        if plain, name != nil || pair != nil {
            throw ValidationError("--plain sends only 8-byte states: it cannot say hello with --name or --pair.")
        }
        if let name, name.isEmpty || name.utf8.count > 63 {
            throw ValidationError("--name \"\(name)\": give a display name of 1…63 bytes (UTF-8).")
        }
        if let pair, pair.isEmpty || pair.utf8.count > 255 || pair.contains(where: \.isWhitespace) {
            throw ValidationError("--pair \"\(pair)\": give the pairing code shown by the receiver, e.g. --pair 4711.")
        }
        if secret != nil || secretFile != nil {
            if pair != nil { throw ValidationError("--secret and --pair: give one (a receiver runs either --accept secret or --accept paired).") }
            if secret != nil, secretFile != nil { throw ValidationError("--secret and --secret-file: give one") }
            if let secret, case .failure(let error) = RobotSecret.parse(secret) { throw ValidationError("--secret: \(error)") }
        }
    }
}
