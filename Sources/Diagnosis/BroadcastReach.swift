#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlWire
import Discovery
import RemoteWire
import SystemIO

/// The `broadcast` line of `doctor --session ID`: whether the stop-all's first datagrams — a
/// broadcast to every host on the links at the default port (Protocol.md §7.6) — come back
/// from the receivers of the session that DNS-SD lists there. A network that drops broadcast
/// (Wi-Fi client isolation, broadcast filtering) still gets the stop through DNS-SD, later.
package enum BroadcastReach {
    /// A receiver of the session as DNS-SD lists it.
    package struct Listed: Sendable, Equatable {
        package var name: String
        package var port: UInt16
        package var addresses: [SocketAddress]
        package var robot: RobotID?

        package init(name: String, port: UInt16, addresses: [SocketAddress], robot: RobotID?) {
            self.name = name
            self.port = port
            self.addresses = addresses
            self.robot = robot
        }
    }

    /// A receiver of the session that answered the broadcast query.
    package struct Answer: Sendable, Equatable {
        package var from: SocketAddress
        package var robot: RobotID?

        package init(from: SocketAddress, robot: RobotID?) {
            self.from = from
            self.robot = robot
        }
    }

    /// The verdict: each receiver listed on the default port answered (by robot id, else by
    /// one of its addresses), or which did not.
    package static func check(session: String, destinations: Int, listed: [Listed], answers: [Answer]) -> DoctorCheck {
        let port = ReceiverPort.standard
        guard destinations > 0 else {
            return DoctorCheck("broadcast", .skip, "no interface but loopback is up: nothing to broadcast on")
        }
        let expected = listed.filter { $0.port == port }
        guard !expected.isEmpty else {
            return DoctorCheck("broadcast", .skip, "DNS-SD lists no receiver of session \(JSONText.quote(session)) on port \(port) to compare with"
                               + " (\(answers.count) answered the broadcast)")
        }
        let silent = expected.filter { r in
            !answers.contains { a in
                if let id = a.robot, let robot = r.robot { return id == robot }
                return r.addresses.contains(a.from)
            }
        }
        guard !silent.isEmpty else {
            return DoctorCheck("broadcast", .ok, "all \(expected.count) receiver\(expected.count == 1 ? "" : "s") of session \(JSONText.quote(session)) "
                               + "on port \(port) answered a broadcast: stop-all stops them before any lookup")
        }
        let names = silent.map { JSONText.quote($0.name) }.joined(separator: ", ")
        return DoctorCheck("broadcast", .warn,
                           "\(silent.count) of \(expected.count) receivers of session \(JSONText.quote(session)) that DNS-SD lists on port \(port) never answered "
                           + "a broadcast (\(names)): this network seems to drop broadcast and link-local multicast, so stop-all reaches them "
                           + "only through DNS-SD (a few hundred ms on the first stop of a lesson)",
                           fix: "let UDP broadcast and ff02::1 to port \(port) through on this network (Wi-Fi: turn off client isolation "
                           + "and broadcast filtering; docs/classroom.md), or keep the teacher's dashboard open (it knows the robots)")
    }
}

extension Doctor {
    /// Browses `session` for `duration` while asking every host on the links, by broadcast, who
    /// is a receiver of it (an unsigned stop-all `query`: it changes nothing), three times.
    package func broadcast(session text: String, duration: Duration = .seconds(2)) -> DoctorCheck {
        guard let session = try? SessionID(text) else { return DoctorCheck("broadcast", .fail, "--session \(JSONText.quote(text)) is not a session ID") }
        let destinations = LinkBroadcast.destinations(port: ReceiverPort.standard)
        guard !destinations.isEmpty else { return BroadcastReach.check(session: text, destinations: 0, listed: [], answers: []) }
        do {
            let runner = try LoopRunner<BrowserEvent>()
            let browser: SessionBrowser
            do throws(DiscoveryError) {
                browser = try SessionBrowser(session: session, lookups: .once, onEvent: runner.mailbox.post)
            } catch {
                return DoctorCheck("broadcast", .skip, "no DNS-SD listing to compare with: \(error)")
            }
            defer { browser.stop() }
            var directory = ReceiverDirectory(session: session)
            var sockets: [SocketAddress.Family: UDPSocket] = [:]
            defer { for s in sockets.values { s.close() } }
            for address in destinations where sockets[address.family] == nil {
                let s = try UDPSocket.sender(for: address)
                if address.family == .inet { try s.allowBroadcast() }
                sockets[address.family] = s
            }
            var nonce: UInt64 = 0
            while nonce == 0 { nonce = UInt64.random(in: 1...UInt64.max) }
            let query = ControlMessage.stopAll(.init(action: .query, unixMillis: WallClock.unixMillis(), nonce: nonce, session: WireText(text)))
            let datagram = ControlDatagram(header: ControlHeader(type: query.type, connection: UInt32.random(in: 1...UInt32.max)),
                                           payload: query.encodePayload()[...]).encode()
            let start = Tick.now()
            let end = start + Tick.nanoseconds(duration)
            var sends = (0..<3).map { start + Tick.nanoseconds(.milliseconds(300 * $0)) }
            var answers: [BroadcastReach.Answer] = []
            var buffer = [UInt8](repeating: 0, count: 2048)
            while true {
                let now = Tick.now()
                if let next = sends.first, next <= now {
                    sends.removeFirst()
                    for address in destinations { _ = try? sockets[address.family]?.send(datagram, to: address) }
                }
                guard now < end else { break }
                let wake = try runner.wait(sockets.values.map { (fd: $0.descriptor.rawValue, events: Poller.Events.readable) },
                                           until: Tick.earliest(sends.first, end))
                if wake.stop != nil { break }
                for event in wake.events { _ = directory.apply(event, now: .now) }
                for socket in sockets.values {
                    while let (length, from) = try socket.receive(into: &buffer) {
                        guard length <= buffer.count, let d = try? ControlDatagram.decode(Array(buffer[..<length])), d.header.type == .stopAllReply,
                              case .stopAllReply(let reply)? = try? ControlMessage.decode(type: .stopAllReply, payload: d.payload),
                              reply.nonce == nonce, reply.outcome != .refused else { continue }
                        answers.append(.init(from: from, robot: reply.robotID))
                    }
                }
            }
            let listed = directory.receivers.map {
                BroadcastReach.Listed(name: $0.name, port: $0.port, addresses: $0.addresses, robot: $0.announcement.robot)
            }
            return BroadcastReach.check(session: text, destinations: destinations.count, listed: listed, answers: answers)
        } catch {
            return DoctorCheck("broadcast", .fail, "cannot broadcast: \(error)", fix: "run it where UDP sockets may be opened")
        }
    }
}
