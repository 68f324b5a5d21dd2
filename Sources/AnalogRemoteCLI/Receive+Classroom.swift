import ControlPlane
import Console
import Discovery
import ErrorReporting
import Receiver

extension Receive {
    /// The classroom settings from `--accept`, `--pairing-code`, `--teacher-key`: checked here,
    /// before the board is touched.
    func classroom() throws(UserFacingError) -> ClassroomSettings {
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
        if let secret {
            guard accept == .secret else {
                throw UserFacingError("--secret needs --accept secret (other modes take no secret)", status: .usage)
            }
            switch RobotSecret.parse(secret) {
            case .success(let parsed): settings.secret = parsed
            case .failure(let error): throw UserFacingError("--secret: \(error)", status: .usage)
            }
        } else if accept == .secret {
            settings.secret = RobotSecret.random()
        }
        if let teacherKey {
            guard !teacherKey.isEmpty else {
                throw UserFacingError("--teacher-key is empty: give the key the teacher uses with stop-all", status: .usage)
            }
            settings.teacherKey = teacherKey
        }
        // The receiver's session and name, advertised or not: a hello naming another session is
        // denied, and a stop-all must name this one (Protocol.md §7.4, §7.6).
        settings.session = session
        settings.displayName = name ?? HostName.current() ?? "receiver"
        return settings
    }
}
