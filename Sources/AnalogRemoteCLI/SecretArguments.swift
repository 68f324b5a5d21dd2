import Console
import ErrorReporting
import ControlPlane
import SystemIO

/// The secret options — `--teacher-key-file`/`--teacher-key`, `--secret-file`/`--secret` — read
/// the same way by every command (docs/security.md): a file only its owner may read (else exit 2,
/// one line), or the value typed on the command line, which works but warns, since every user of
/// the machine sees a process's arguments (`ps`, /proc).
enum SecretArguments {
    /// The teacher key of `--teacher-key-file FILE` or `--teacher-key KEY` (nil: neither).
    static func teacherKey(inline: String?, file: String?) throws(UserFacingError) -> TeacherKey? {
        if inline != nil, file != nil {
            throw UserFacingError("--teacher-key and --teacher-key-file: give one (the file keeps the key out of `ps`)", status: .usage)
        }
        if let file {
            do { return try TeacherKey(file: file) } catch { throw UserFacingError(error.description, status: .badConfiguration) }
        }
        guard let inline else { return nil }
        warnIfTyped("--teacher-key", instead: "--teacher-key-file FILE")
        do { return try TeacherKey(text: inline) } catch { throw UserFacingError("--teacher-key: \(error)", status: .usage) }
    }

    /// The robot's secret words of `--secret-file FILE` or `--secret WORDS` (nil: neither).
    static func secret(inline: String?, file: String?) throws(UserFacingError) -> RobotSecret? {
        if inline != nil, file != nil {
            throw UserFacingError("--secret and --secret-file: give one (the file keeps the words out of `ps`)", status: .usage)
        }
        let words: String
        if let file {
            do { words = try SecretFile.read(path: file) } catch {
                throw UserFacingError("--secret-file: \(error)", status: .badConfiguration)
            }
        } else if let inline {
            warnIfTyped("--secret", instead: "--secret-file FILE")
            words = inline
        } else {
            return nil
        }
        switch RobotSecret.parse(words) {
        case .success(let secret): return secret
        case .failure(let error): throw UserFacingError("\(file.map { "--secret-file \($0)" } ?? "--secret"): \(error)",
                                                        status: file == nil ? .usage : .badConfiguration)
        }
    }

    /// Why the config `file`, which holds a secret itself, is not private enough (nil: it is).
    static func permissionProblem(_ file: String) -> String? { SecretFile.problem(path: file) }

    /// One warning line when `option` was typed (it is then in this process's argv for anyone to
    /// read); a value from a config file is not in argv and gets none.
    static func warnIfTyped(_ option: String, instead: String) {
        let typed = CommandLine.arguments.dropFirst().contains { $0 == option || $0.hasPrefix(option + "=") }
        guard typed else { return }
        StandardError.write("analog-remote: warning: \(option) on the command line can be read by every user of this machine (ps): use \(instead), a file only you can read\n")
    }
}
