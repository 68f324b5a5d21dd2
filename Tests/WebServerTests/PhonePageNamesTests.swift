import ControlPlane
import ControlWire
import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import SystemIO
import Testing

/// The phone page's list of `--peer` robots: a name shown to students changes only from a reply
/// signed with the teacher key. Without a key every robot stays as typed; an unsigned answer —
/// a stop-all query's reply or a receiver's accept — never renames one.
@Suite(.serialized) struct PhonePageNamesTests {
    typealias StandIn = TeacherLinkIdentityTests.StandIn

    /// Log lines of PeerNames, by the peer they are about: when every robot has one, every
    /// answer has been judged.
    final class PeerLog: LogHandler, @unchecked Sendable {
        let peers = Mutex<Set<String>>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            if let peer = event.metadata?["peer"] { peers.withLock { _ = $0.insert("\(peer)") } }
        }
    }

    final class Reports: Sendable {
        let list = Mutex<[PageReport]>([])
        func add(_ r: PageReport) { list.withLock { $0.append(r) } }
        var accepted: Bool {
            list.withLock { $0.contains { if case .status(let s) = $0, s.receiver != nil { true } else { false } } }
        }
    }

    /// A keyless receiver in this process that calls itself `name`: a real control plane (it
    /// accepts a phone's hello, answers stop-all queries unsigned) on a loopback socket.
    final class KeylessReceiver {
        let socket: UDPSocket
        var plane: ControlPlane<SocketAddress>

        init(name: String) throws {
            socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            var s = ClassroomSettings()
            s.accept = .first
            s.session = "AnalogRemote"
            s.displayName = name
            s.peerID = 9
            plane = ControlPlane(settings: s, connection: 0xCCCC, oneShotConnection: 0xDDDD)
        }

        var address: SocketAddress { get throws { try socket.localAddress() } }

        func pump(for duration: Duration) {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let end = ContinuousClock.now + duration
            while ContinuousClock.now < end {
                var out = plane.poll(now: .now)
                if let (n, from) = try? socket.receive(into: &buffer, timeout: .milliseconds(10)), n != 8,
                   plane.admit(from, now: .now) {
                    let more = plane.control(Array(buffer[..<n]), from: from, now: .now, unixMillis: WallClock.unixMillis())
                    out.datagrams += more.datagrams
                }
                for (to, bytes) in out.datagrams { _ = try? socket.send(bytes, to: to) }
            }
        }
    }

    /// A keyless robot named like a real one: with or without the teacher key, it neither
    /// renames itself on the phone page (its answer to the query, its accept when a student
    /// drives it) nor takes the real robot's name. Without a key the real robot keeps its
    /// address too: nothing unsigned names anything.
    @Test(arguments: [false, true]) func aKeylessRobotNamedLikeARealOneRenamesNothingOnThePhonePage(withKey: Bool) throws {
        let key: [UInt8]? = withKey ? TeacherLinkIdentityTests.macKey : nil
        let real = try StandIn(name: "robot-1", key: key, robotID: RobotID(value: 0x98e89e894b))
        let impostor = try KeylessReceiver(name: "robot-1")
        defer { real.close(); impostor.socket.close() }
        let log = PeerLog()
        let hub = PhoneHub(settings: .init(session: "AnalogRemote"), logger: Logger(label: "test"))
        let addresses = [try SocketAddress.resolve(host: "127.0.0.1", port: real.port)[0], try impostor.address]
        let listed = addresses.enumerated().map { i, a in PhoneHub.Robot(id: "p\(i + 1)", name: "\(a)", peer: .init(address: a, label: "\(a)")) }
        hub.setRobots(listed)
        let names = try PeerNames(robots: listed, session: "AnalogRemote", hub: hub, teacherKey: key, logger: Logger(label: "test") { _ in log })
        defer { names.stop() }
        // Both answer; every answer is judged (one log line per robot).
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until, log.peers.withLock({ $0.count }) < 2 {
            real.pump(for: .milliseconds(30))
            impostor.pump(for: .milliseconds(30))
        }
        #expect(log.peers.withLock { $0 } == Set(addresses.map { "\($0)" }), "not every answer was judged")
        // A student drives the impostor: its accept names it "robot-1".
        let reports = Reports()
        let page = try #require(hub.open(sink: reports.add))
        defer { hub.close(page, why: "test") }
        hub.handle(.join(robot: "p2", name: "Ann", code: nil), from: page)
        let accepted = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < accepted, !reports.accepted { impostor.pump(for: .milliseconds(30)) }
        #expect(reports.accepted, "the impostor's accept never reached the page")
        let want = withKey ? ["robot-1", "\(addresses[1])"] : addresses.map { "\($0)" }
        #expect(hub.robots.map(\.name) == want)
        #expect(hub.robots.filter { $0.name == "robot-1" }.count <= 1, "two robots named robot-1: \(hub.robots.map(\.name))")
    }
}
