/// When a board link reads the sensor block (``SensorBlock/read``): a value-type schedule, the
/// caller passes the time in and does the I/O.
///
/// Rules (Protocol.md §4.6):
/// - a read is due ``interval`` after the previous one went out (a read delayed by writes delays
///   the next one too: two reads are never closer than ``interval``, so the rate is never exceeded);
/// - it goes out only when the writer has nothing to send — no probe, safe state, read-back or
///   changed value — and nothing is on the wire (``MemoryMapWriter/isIdleForReads``): a pending
///   state change always goes first, and a read never goes behind another command;
/// - a board whose map lacks the block, or a profile without it, is never read;
/// - interval nil: off.
///
/// A change asked for while a read is on the wire waits for the read's prompt — unless the link
/// opts into writing it behind the read at once (``MemoryMapWriter/nextChange()``, rule 8), and
/// the firmware answers both in order, in one pass of its loop. The read's reply comes first.
package struct SensorPoller: Sendable {
    /// Time between reads; nil = never read.
    package let interval: Duration?
    /// A read is on the wire.
    package private(set) var isReading = false
    /// The last block read since the link came up (nil: none yet).
    package private(set) var latest: SensorBlock?
    /// Reads answered since start.
    package private(set) var reads = 0
    private var due: ContinuousClock.Instant?

    /// `rate` in reads per second; 0 = off.
    package init(rate: Double) {
        interval = rate > 0 ? .nanoseconds(Int64((1e9 / rate).rounded())) : nil
    }

    /// The default rate: 10 reads a second.
    package static let defaultRate = 10.0

    /// The link came up: the first read is due as soon as the writer is idle.
    package mutating func connected(now: ContinuousClock.Instant) {
        isReading = false
        latest = nil
        due = interval == nil ? nil : now
    }

    /// The link went down: nothing is read until it is up again.
    package mutating func disconnected() {
        isReading = false
        latest = nil
        due = nil
    }

    /// When the next read is due (nil: off, link down, or a read on the wire): the caller's
    /// loop wakes then and asks ``nextCommand(writer:now:)``.
    package var deadline: ContinuousClock.Instant? { isReading ? nil : due }

    /// The read to send now, or nil. The returned command is outstanding until
    /// ``completed(_:)`` or ``failed()``. Call only after `writer.nextCommand()` returned nil.
    package mutating func nextCommand(writer: MemoryMapWriter, now: ContinuousClock.Instant) -> BoardCommand? {
        guard let interval, let due, !isReading, now >= due, writer.isIdleForReads else { return nil }
        isReading = true
        // One interval after this read goes out, not after it was due: a read the writes held
        // back for 90 ms of a 100 ms interval is not followed by another 10 ms later, and a link
        // busy for seconds does not owe a burst of reads. (A late wake-up drifts the schedule by
        // its lateness; the rate only ever comes out lower.)
        self.due = now + interval
        return SensorBlock.read
    }

    /// The read was answered with `response`: the block, or nil when the reply is not 11 bytes.
    @discardableResult
    package mutating func completed(_ response: BoardResponse) -> SensorBlock? {
        guard isReading else { return nil }
        isReading = false
        guard case .values(let values) = response, let block = SensorBlock(readReply: values) else { return nil }
        latest = block
        reads += 1
        return block
    }

    /// The read failed or timed out; the next one is due at the usual time.
    package mutating func failed() {
        isReading = false
    }
}
