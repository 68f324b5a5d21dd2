import BoardLink
import SystemIO

/// Board link events crossing from the link's thread to the receive loop. At most 64 wait: the
/// loop only needs to know that the link changed, not every flap.
package typealias BoardEventInbox = EventMailbox<BoardEvent>

extension EventMailbox where Event == BoardEvent {
    package convenience init() throws(SystemError) { try self.init(capacity: 64) }
}
