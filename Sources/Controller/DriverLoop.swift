import Console
import SystemIO

/// The controller's send loop with its companions (follower, control session) as AnalogRemoteKit's
/// `RobotController` assembles it. `analog-remote control` assembles the same pieces itself, with
/// its recorder and replay guard between them; the phone page has its own (one loop per page).
public enum DriverLoop {
    /// - Parameters:
    ///   - session: the classroom control session (nil under `--plain`).
    ///   - follower: the DNS-SD session follower when the receiver is found by session.
    ///   - watch: what rides along in the session's place; it must forward every call to the
    ///     session (AnalogRemoteKit reads the robot's state through it). Default: the session itself.
    public static func make(source: any InputSource, destination: Destination, rate: Double, signals: SignalWatcher,
                            status: StatusLine, session: ControlSession?, follower: SessionFollower?,
                            watch: (ControlSession) -> any SendLoopCompanion = { $0 }) -> SendLoop {
        var loop = SendLoop(source: source, destination: destination, schedule: .init(rate: rate), signals: signals, status: status)
        session?.destination = destination
        if let follower, let session {
            follower.linkSilence = { [weak session] now in session?.silence(now: now) }
        }
        // The follower first: it moves the destination before the control session looks at it.
        loop.companions = [follower as (any SendLoopCompanion)?, session.map(watch)].compactMap { $0 }
        return loop
    }
}
