import BoardLink
import BoardProtocol
import SystemIO

/// Leaving a board at rest: the mapping's rest values (drive 0, every bound output released),
/// then the profile's safe state (motors 0, LEDs and buzzer off, the drive's variables 0),
/// confirmed by the board's prompt.
///
/// The receiver does it on every way out it sees (``ReceiverService``'s finish); `analog-remote
/// rest` does it for a receiver that could not see its own death (SIGKILL, a crash, a stall
/// ended by systemd's watchdog), opening the board exactly as the receiver does. Neither holds
/// rest values of its own: they are the mapping's and the probed profile's.
package enum BoardRest {
    /// Hands `values` to the board, then its safe state; true when the board confirmed it
    /// within `timeout`.
    package static func leave(_ board: any BoardSink, values: [UInt8: UInt8], timeout: Duration) -> Bool {
        board.setDesired(values)
        return board.writeSafeState(timeout: timeout)
    }

    /// Opens the board `spec` names as the receiver would (probe, profile and mapping from
    /// `plan`; a tty another driver holds is refused untouched, exit 3), leaves it at rest and
    /// closes it. Returns what the probe found (nil for a board that is not probed).
    package static func rest(spec: String, plan: BoardPlan, timeout: Duration) throws(CommandFailure) -> BoardResolution? {
        let inbox: BoardEventInbox
        do {
            inbox = try BoardEventInbox()
        } catch {
            throw CommandFailure("cannot set up the board link: \(error)", kind: .failed)
        }
        let board = try BoardSinks.open(spec: spec, plan: plan, events: inbox, traceBoard: false)
        defer { board.close() }
        let mapping = board.resolution?.mapping ?? plan.fixed ?? .default(for: plan.decidedProfile ?? .motors)
        guard leave(board, values: mapping.restValues, timeout: timeout) else {
            throw CommandFailure("\(spec): the board did not confirm the safe state (motors 0) within \(timeout); "
                                 + "the motors may still run: check the board and its cable", kind: .deviceUnavailable)
        }
        return board.resolution
    }
}
