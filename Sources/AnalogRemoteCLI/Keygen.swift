import ArgumentParser
import CommandSupport
import Console
import ErrorReporting
import ControlPlane
import SystemIO

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a strong teacher key (256 random bits) for stop-all and the receivers.",
        discussion: """
            Prints a new key (`ark1-` and 64 hex digits), or with --output writes it to a new file only \
            its owner may read (mode 600; an existing file is never overwritten). Give the same file to \
            `receive --teacher-key-file` on every robot and to `stop-all --teacher-key-file`. A key made \
            here is used as it is; a passphrase typed instead must be at least 12 characters and is \
            stretched with scrypt (docs/security.md).
            """)

    @Option(help: ArgumentHelp("Write the key to this new file (mode 600) instead of printing it.", valueName: "file"))
    var output: String?

    func run() throws {
        try runReporting { try generate() }
    }

    func generate() throws -> CommandOutcome {
        let key = TeacherKey.generate()
        guard let output else {
            StandardOutput.write(key + "\n")
            return .done
        }
        let (directory, name) = SafeDirectory.split(output)
        let made: Bool
        do throws(SafeFileError) {
            made = try SafeDirectory(directory, create: false).createOnce(name, with: Array((key + "\n").utf8), mode: 0o600)
        } catch {
            throw UserFacingError("keygen --output: \(error)", status: .badConfiguration)
        }
        guard made else {
            throw UserFacingError("keygen --output \(output): it exists (a key is never overwritten: remove it first)", status: .badConfiguration)
        }
        StandardError.write("analog-remote: teacher key written to \(output) (mode 600)\n")
        return .done
    }
}
