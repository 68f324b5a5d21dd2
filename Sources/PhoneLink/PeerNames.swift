import ControlPlane
import ControlWire
import Controller
import Foundation
import Logging
import RemoteWire
import Synchronization
import SystemIO

/// The names `--peer` robots give themselves, for the picker: one robot, one name everywhere
/// (the drive screen shows the receiver's name from its accept; the picker must say the same
/// before anyone drives).
///
/// Asks each receiver with a stop-all `query` (Protocol.md §7.6: unsigned, changes nothing on the
/// receiver, answered with the receiver's display name even when refused for another session),
/// once a second for 10 s, then every 10 s until it answers; an answer goes to
/// ``PhoneHub/nameRobot(_:_:)``. A receiver that never answers keeps the name it was given
/// (the address as typed). One small thread with one UDP socket per address family.
///
/// Which answer names a robot (Protocol.md §7.6, "What an answer may change"; §8.5): only a
/// reply signed with the teacher key (`web --teacher-key-file`) for our query. An unsigned one —
/// a receiver without the key, or a laptop answering at that address with a real robot's name —
/// never renames the robot the students see: it is logged as unverified, once per robot, and the
/// robot keeps the name it was given. Without a teacher key nothing can be verified, so no answer
/// renames anything: every robot is listed as typed (each robot is still asked once, and its
/// answer logged, so the teacher sees who answers where).
package final class PeerNames: Sendable {
    private let runner: LoopRunner<Never>
    private let running = Atomic<Bool>(true)

    /// `session`: the session ID the query names (a receiver of another session still answers
    /// with its name).
    /// `teacherKey`: the MAC key of the teacher key (``TeacherKey/macKey``), when the server has one.
    package init(robots: [PhoneHub.Robot], session: String, hub: PhoneHub, teacherKey: [UInt8]? = nil,
                logger: Logger) throws(SystemError) {
        let runner = try LoopRunner<Never>(stopOn: StopSignals.none)
        self.runner = runner
        let connection = UInt32.random(in: 1...UInt32.max)
        var sockets: [SocketAddress.Family: UDPSocket] = [:]
        for robot in robots where sockets[robot.peer.address.family] == nil {
            sockets[robot.peer.address.family] = try UDPSocket.sender(for: robot.peer.address)
        }
        let thread = Thread { [sockets] in
            defer { for s in sockets.values { s.close() } }
            struct Asking { let robot: PhoneHub.Robot; var nonce: UInt64; var next: ContinuousClock.Instant; var sent = 0; var warned = false }
            let start = ContinuousClock.now
            var asking = robots.map { Asking(robot: $0, nonce: 0, next: start) }
            var buffer = [UInt8](repeating: 0, count: 2048)
            var now = start
            while !asking.isEmpty {
                for i in asking.indices where asking[i].next <= now {
                    asking[i].nonce = UInt64.random(in: 0...UInt64.max)
                    let query = ControlMessage.StopAll(action: .query, unixMillis: WallClock.unixMillis(), nonce: asking[i].nonce,
                                                       session: WireText(session))
                    let datagram = ControlDatagram(header: ControlHeader(type: .stopAll, connection: connection),
                                                   payload: ControlMessage.stopAll(query).encodePayload()[...]).encode()
                    let address = asking[i].robot.peer.address
                    _ = try? sockets[address.family]?.send(datagram, to: address)
                    asking[i].sent += 1
                    asking[i].next = now + (asking[i].sent < 10 ? .seconds(1) : .seconds(10))
                }
                let fds = sockets.values.map { (fd: $0.descriptor.rawValue, events: Poller.Events.readable) }
                guard let wake = try? runner.wait(fds, untilInstant: asking.map(\.next).min()), wake.stop == nil else { return }
                now = wake.now.instant
                for socket in sockets.values {
                    while let (length, from) = try? socket.receive(into: &buffer) {
                        guard length <= buffer.count, let d = try? ControlDatagram.decode(Array(buffer[..<length])),
                              d.header.type == .stopAllReply,
                              case .stopAllReply(let reply)? = try? ControlMessage.decode(type: .stopAllReply, payload: d.payload),
                              let i = asking.firstIndex(where: { $0.robot.peer.address == from && $0.nonce == reply.nonce })
                        else { continue }
                        guard let key = teacherKey else {
                            logger.info("unverified reply (no teacher key): the robot keeps the name it was given",
                                        metadata: ["peer": "\(from)", "calls itself": "\(reply.displayName)"])
                            asking.remove(at: i)
                            continue
                        }
                        guard reply.verify(key: key) else {
                            // Keep asking: the robot may be restarted with the key. Said once per robot.
                            if !asking[i].warned {
                                logger.warning("unverified reply: not signed with the teacher key; the robot keeps its name",
                                               metadata: ["peer": "\(from)", "calls itself": "\(reply.displayName)"])
                                asking[i].warned = true
                            }
                            continue
                        }
                        logger.info("robot named", metadata: ["peer": "\(from)", "name": "\(reply.displayName)"])
                        hub.nameRobot(asking[i].robot.id, reply.displayName)
                        asking.remove(at: i)
                    }
                }
            }
        }
        thread.name = "peer names"
        thread.start()
    }

    /// Stops asking. Idempotent.
    package func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        runner.requestStop()
    }
}
