import ControlPlane
import Console
import Discovery
import ErrorReporting
import Receiver

extension Receive {
    /// The classroom settings from `--accept`, `--pairing-code`, `--teacher-key`: checked here,
    /// before the board is touched. `loadingSecrets` false (in `validate()`): only what the
    /// command line alone shows; the files are read, and a teacher key stretched, once, in `run()`.
    func classroom(loadingSecrets: Bool = true) throws(UserFacingError) -> ClassroomSettings {
        var settings = ClassroomSettings()
        settings.accept = accept
        if let pairingCode {
            guard accept == .paired else {
                throw UserFacingError("--pairing-code needs --accept paired (other modes take any controller)", status: .usage)
            }
            guard (1...16).contains(pairingCode.count), !pairingCode.contains(where: \.isWhitespace) else {
                throw UserFacingError("--pairing-code \"\(pairingCode)\": give 1…16 characters without spaces, e.g. 4711",
                                      status: .usage)
            }
            settings.pairingCode = pairingCode
        } else if accept == .paired {
            settings.pairingCode = ClassroomSettings.randomPairingCode()
        }
        if secret != nil || secretFile != nil {
            guard accept == .secret else {
                throw UserFacingError("\(secret != nil ? "--secret" : "--secret-file") needs --accept secret (other modes take no secret)",
                                      status: .usage)
            }
            if let secret, secretFile == nil, case .failure(let error) = RobotSecret.parse(secret) {
                throw UserFacingError("--secret: \(error)", status: .usage)
            }
        }
        if secret != nil, secretFile != nil {
            throw UserFacingError("--secret and --secret-file: give one (the file keeps the words out of `ps`)", status: .usage)
        }
        if teacherKey != nil, teacherKeyFile != nil {
            throw UserFacingError("--teacher-key and --teacher-key-file: give one (the file keeps the key out of `ps`)", status: .usage)
        }
        if let teacherKey, teacherKey.count < TeacherKey.minimumPassphrase, !teacherKey.hasPrefix(TeacherKey.generatedPrefix) {
            throw UserFacingError("--teacher-key: the teacher key is \(teacherKey.count) characters: give at least \(TeacherKey.minimumPassphrase), or make one with `analog-remote keygen`",
                                  status: .usage)
        }
        if loadingSecrets {
            if accept == .secret {
                settings.secret = try SecretArguments.secret(inline: secret, file: secretFile) ?? RobotSecret.random()
                settings.showSecret = secretFile == nil
            }
            settings.teacherKey = try SecretArguments.teacherKey(inline: teacherKey, file: teacherKeyFile)
        }
        // The receiver's session and name, advertised or not: a hello naming another session is
        // denied, and a stop-all must name this one (Protocol.md §7.4, §7.6).
        settings.session = session
        settings.displayName = name ?? HostName.current() ?? "receiver"
        return settings
    }
}
