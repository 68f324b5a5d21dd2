import Console
import SystemIO

/// The controller's send loop with its companions: one assembly for `analog-remote control` and
/// AnalogRemoteKit's `RobotController`. The phone page has its own (one loop per page).
package enum DriverLoop {
    /// - Parameters:
    ///   - session: the classroom control session (nil under `--plain`).
    ///   - follower: the DNS-SD session follower when the receiver is found by session.
    ///   - extras: companions serviced after the follower and before the session (control's
    ///     recorder and replay guard), in this order. The session must stay last: the loop seals
    ///     states and reads `endFailure` through its last companion.
    ///   - watch: what rides along in the session's place; it must forward every call to the
    ///     session (AnalogRemoteKit reads the robot's state through it). Default: the session itself.
    package static func make(source: any InputSource, destination: Destination, rate: Double, signals: SignalWatcher,
                            status: StatusLine, session: ControlSession?, follower: SessionFollower?,
                            extras: [(any SendLoopCompanion)?] = [],
                            watch: (ControlSession) -> any SendLoopCompanion = { $0 }) -> SendLoop {
        var loop = SendLoop(source: source, destination: destination, schedule: .init(rate: rate), signals: signals, status: status)
        session?.destination = destination
        if let follower, let session {
            follower.linkSilence = { [weak session] now in session?.silence(now: now) }
        }
        // The follower first: it moves the destination before the control session looks at it.
        loop.companions = ([follower as (any SendLoopCompanion)?] + extras + [session.map(watch)]).compactMap { $0 }
        return loop
    }
}
