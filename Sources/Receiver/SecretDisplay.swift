import ControlPlane
import TerminalQR

/// What `receive --accept secret` prints on stdout at start, for the teacher and the drivers:
/// the robot's secret as words (to type: `control --secret "…"`) and as a QR code of the same
/// words (to scan with a phone and paste).
enum SecretDisplay {
    static func text(_ secret: RobotSecret) -> String {
        "secret \(secret.words)\n" + TerminalQR.render(secret.words)
    }
}
