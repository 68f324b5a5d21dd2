import DriveRecord
import Logging
import SystemIO

/// One thing ``ReceiverMachine`` asks its caller to do. The machine never touches a socket, the
/// board, a log or the clock: it appends these to ``ReceiverMachine/actions`` and the caller
/// performs them in order, then calls ``ReceiverMachine/clearActions()``.
///
/// Cost: a state packet that changes nothing appends nothing; the buffer keeps its capacity
/// between wake-ups, so the hot path allocates no action storage.
package enum ReceiverAction: Sendable {
    /// Hand these to the board (`BoardSink.setDesired`): per address, the latest value wins.
    case board([UInt8: UInt8])
    /// Send this datagram to that address, without waiting (a full buffer drops it).
    case send([UInt8], to: SocketAddress)
    /// Write this log line (already rate limited where it concerns a single source).
    case log(Logger.Level, Logger.Message, Logger.Metadata)
    /// Something the status line shows changed (a failsafe, the teacher's stop): redraw it now.
    case statusChanged
    /// `--black-box`: keep this in the flight recorder (only when the machine records).
    case record(RecordEvent)
    /// `--black-box`: write the flight recorder out now, for this reason (an automatic write:
    /// the recorder spaces them).
    case writeBlackBox(String)
}
