#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlPlane
import Console
import ControlWire
import Logging
import RemoteWire
import SystemIO

/// The receive loop's side of the control plane (Protocol.md §7) that is not a rule: making the
/// plane (its random ids), the start-up lines, the totals at exit. The rules are
/// ``ReceiverMachine``'s.
extension ReceiverService {
    static func makeControlPlane(_ configuration: ReceiverConfiguration) -> ControlPlane<SocketAddress> {
        var settings = configuration.classroom
        settings.failsafe = configuration.failsafe
        if settings.peerID == 0 { settings.peerID = UInt64.random(in: 1...UInt64.max) }
        let connection = UInt32.random(in: 1...UInt32.max)
        var oneShot = UInt32.random(in: 1...UInt32.max)
        while oneShot == connection { oneShot = UInt32.random(in: 1...UInt32.max) }
        return ControlPlane(settings: settings, connection: connection, oneShotConnection: oneShot)
    }

    /// `first`, `any`, `paired` or `secret`, for the start-up log line.
    var acceptLabel: String { machine.plane.settings.accept.rawValue }

    /// Start-up lines: the pairing code (also in the status line), the secret (words and a QR
    /// code, on stdout), the teacher key's presence.
    func announceClassroom() {
        let settings = machine.plane.settings
        if settings.accept == .paired {
            logger.notice("pairing code \(settings.pairingCode): controllers start with --pair \(settings.pairingCode)")
        }
        if settings.accept == .secret, let secret = settings.secret {
            // The words go to the robot's screen only, never into a log line (docs/security.md);
            // a secret read from a file is the teacher's to hand out, and is not shown at all.
            if settings.showSecret { StandardOutput.write(SecretDisplay.text(secret)) }
            logger.notice(settings.showSecret
                          ? "authenticated mode: controllers need the robot's secret, the 12 words shown on this screen"
                          : "authenticated mode: controllers need the robot's secret (read from its file, not shown)")
        }
        if settings.teacherKey != nil {
            logger.info("stop-all needs the teacher key")
        }
    }

    func logControlTotals() {
        let plane = machine.plane
        let peers = plane.peers
        logger.debug("control plane", metadata: ["peers": "\(peers.count)", "limited": "\(peers.limited)",
                                                 "refused": "\(peers.refused)", "evicted": "\(peers.evicted)",
                                                 "wrong_connection": "\(peers.wrongConnection)",
                                                 "buffers_dropped": "\(peers.buffersDropped)"])
        let attempts = plane.attempts
        if attempts.failed > 0 || attempts.throttled > 0 || plane.envelopesRefused > 0 {
            logger.notice("security", metadata: ["wrong_attempts": "\(attempts.failed)", "throttled_attempts": "\(attempts.throttled)",
                                                 "envelopes_refused": "\(plane.envelopesRefused)"])
        }
    }
}
