import Console
import SystemIO

/// Something that rides along with ``SendLoop`` in its one poll loop: the classroom control
/// session (``ControlSession``, on the state packets' socket — a receiver knows a controller by
/// its source address and port) and the session follower (``SessionFollower``, on the DNS-SD
/// reply sockets). The loop stays in charge of states; a companion reads and writes its own
/// descriptors, may move the destination, hold states back or end the loop.
///
/// Used from the loop's thread only. Nothing here may block, except ``finish(socket:peer:)``,
/// which is called once on the way out (bounded).
package protocol SendLoopCompanion: AnyObject {
    /// The descriptor to poll for readability (the state socket once attached), or nil.
    var descriptor: Int32? { get }
    /// Every descriptor to poll for readability (default: ``descriptor``).
    var descriptors: [Int32] { get }
    /// When ``service(socket:peer:now:)`` is next due even without input (retransmission, ping).
    var nextDeadline: ContinuousClock.Instant? { get }
    /// False while states must not go out (a paired hello still waiting for its accept).
    var allowsStates: Bool { get }
    /// Extra parts for the status line.
    var statusParts: [String] { get }
    /// Called after every wake-up with the socket states go to `peer` on (nil while there is no
    /// destination). Reads what arrived, sends what is due.
    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction]
    /// ``service(socket:peer:now:)`` told whether poll saw any of ``descriptors`` readable (or in
    /// error) on this wake-up; true when it was not asked. A companion may skip its reads when
    /// false: a `recvfrom` that says EAGAIN is one system call per state sent. Poll is
    /// level-triggered, so what arrives after it is seen on the next wake-up. Default: the reads
    /// are not skipped.
    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction]
    /// On the way out, after the neutral packets: say goodbye (bounded wait).
    func finish(socket: UDPSocket?, peer: SocketAddress?)
    /// A state packet could not be sent (ECONNREFUSED: nothing listens at the peer).
    func sendFailed(_ error: SystemError)
    /// The status line's first part (what the robot does), or nil.
    func lead(now: ContinuousClock.Instant, colour: Bool) -> String?
    /// Set when the controller must end non-zero although it stopped on request (it never
    /// heard a single answer): the one-line reason.
    var endFailure: String? { get }
    /// What an 8-byte state packet becomes on the wire (the authenticated envelope under
    /// `--secret`), or nil to hold it back.
    func wrapState(_ packet: [UInt8]) -> [UInt8]?
}

extension SendLoopCompanion {
    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction] {
        service(socket: socket, peer: peer, now: now)
    }
    package func wrapState(_ packet: [UInt8]) -> [UInt8]? { packet }
    package func sendFailed(_ error: SystemError) {}
    package func lead(now: ContinuousClock.Instant, colour: Bool) -> String? { nil }
    package var endFailure: String? { nil }
}

package enum CompanionAction: Equatable, Sendable {
    /// Send the current state now (states were just allowed).
    case sendNow
    /// Stop the controller for this reason (neutral packets first, as always).
    case end(EndReason)
}

extension SendLoopCompanion {
    package var descriptors: [Int32] { descriptor.map { [$0] } ?? [] }
}
