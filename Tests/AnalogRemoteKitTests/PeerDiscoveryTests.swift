@testable import AnalogRemoteKit
import Discovery
import Foundation
import Logging
import Synchronization
import SystemIO
import Testing

/// RemoteSession's DNS-SD side with the browser replaced: what the app sees when peers are
/// announced, leave, restart, when the responder is missing or goes away. The real browser is
/// exercised in network namespaces (scripts/examples-test.sh).
@Suite(.serialized) struct PeerDiscoveryTests {
    static let session = try! SessionID("kit-discovery")

    /// The browse events of a service announced as `name` with `peer` at `address`.
    static func announced(_ name: String, peer: String, at address: SocketAddress, session: SessionID = session,
                          interface: UInt32 = 2) -> [BrowserEvent] {
        let key = ServiceKey(name: InstanceName.forDisplay(name, in: session), interface: interface)
        let txt = ReceiverAnnouncement(session: session, peer: peer, displayName: name).txtRecord.encoded
        return [.found(key), .resolved(key, host: "host.local.", port: address.port, txt: txt), .addresses(key, [address])]
    }

    static func gone(_ name: String, interface: UInt32 = 2) -> BrowserEvent {
        .lost(ServiceKey(name: InstanceName.forDisplay(name, in: session), interface: interface))
    }

    static func loopback(_ port: UInt16) throws -> SocketAddress { try SocketAddress.resolve("127.0.0.1:\(port)") }

    @Test func announcedPeersComeAndGo() throws {
        var directory = PeerDirectory(session: Self.session, ownID: "00000000000000aa")
        let now = ContinuousClock.now
        let bob = try Self.loopback(4001)
        var changes = Self.announced("Bob", peer: "00000000000000bb", at: bob).flatMap { directory.apply(.peer, $0, now: now) }
        let bobPeer = RemoteSession.Peer(id: "00000000000000bb", displayName: "Bob")
        #expect(changes == [.init(peer: bobPeer, state: .available)])
        #expect(directory.sightings["00000000000000bb"]?.addresses == [bob])

        // Itself, a service without a peer id, and one of another session (same subtype) are not peers.
        changes = Self.announced("Me", peer: "00000000000000aa", at: try Self.loopback(4002)).flatMap { directory.apply(.peer, $0, now: now) }
        changes += Self.announced("Manual", peer: "", at: try Self.loopback(4003)).flatMap { directory.apply(.receiver, $0, now: now) }
        let other = try SessionID("another")
        let key = ServiceKey(name: InstanceName.forDisplay("Eve", in: Self.session), interface: 2)
        let txt = ReceiverAnnouncement(session: other, peer: "00000000000000ee", displayName: "Eve").txtRecord.encoded
        changes += [BrowserEvent.found(key), .resolved(key, host: "h.local.", port: 4004, txt: txt),
                    .addresses(key, [try Self.loopback(4004)])].flatMap { directory.apply(.peer, $0, now: now) }
        #expect(changes.isEmpty)

        // A receiver is a peer too; a restart under the same name is a new peer.
        changes = Self.announced("robot", peer: "00000000000000cc", at: try Self.loopback(27183)).flatMap { directory.apply(.receiver, $0, now: now) }
        #expect(changes.map(\.state) == [.available])
        #expect(directory.peers.map(\.displayName) == ["Bob", "robot"])
        changes = Self.announced("robot", peer: "00000000000000cd", at: try Self.loopback(27184)).flatMap { directory.apply(.receiver, $0, now: now) }
        #expect(changes.map(\.peer.id) == ["00000000000000cc", "00000000000000cd"])
        #expect(changes.map(\.state) == [.unavailable, .available])

        changes = directory.apply(.peer, Self.gone("Bob"), now: now)
        #expect(changes == [.init(peer: bobPeer, state: .unavailable)])
        #expect(directory.peers.map(\.id) == ["00000000000000cd"])
    }

    /// A session finds Bob through the (fake) browser, connects to him by his peer id alone, and
    /// sees him leave the network.
    @Test func aFoundPeerIsConnectedByItsID() async throws {
        let finder = FakeFinder()
        let ada = try RemoteSession(sessionID: Self.session.text, displayName: "Ada", finder: finder)
        let bob = try await RemoteSession(sessionID: Self.session.text, displayName: "Bob", discovery: false)
        #expect(ada.discoveryState == .active)
        #expect(bob.discoveryState == .off)
        // What Ada announced: her peer id and port, in her session.
        let announcement = try #require(finder.announcement)
        #expect(announcement.peerID == ada.localPeer.id && announcement.port == ada.port && announcement.session == Self.session)

        let changes = ada.peerChanges
        for event in Self.announced("Bob", peer: bob.localPeer.id, at: try Self.loopback(bob.port)) { finder.emit(.browsed(.peer, event)) }
        let found = await within { () -> RemoteSession.Peer? in
            for await change in changes where change.state == .available { return change.peer }
            return nil
        }
        #expect(found == bob.localPeer)
        #expect(ada.availablePeers == [bob.localPeer])

        let peer = try await ada.connect(to: try #require(found))
        #expect(peer == bob.localPeer)
        #expect(ada.connectedPeers == [bob.localPeer])

        finder.emit(.browsed(.peer, Self.gone("Bob")))
        let left = await within { () -> RemoteSession.Peer? in
            for await change in changes where change.state == .unavailable { return change.peer }
            return nil
        }
        #expect(left == bob.localPeer)
        #expect(ada.availablePeers.isEmpty)
        await bob.close()
        await ada.close()
        #expect(finder.stopped)

        // Not announced (any more): one clear error, nothing sent.
        let stranger = try await RemoteSession(sessionID: Self.session.text, displayName: "Cy", discovery: false)
        await #expect(throws: AnalogRemoteError.self) { _ = try await stranger.connect(to: RemoteSession.Peer(id: "00000000000000ff", displayName: "Nobody")) }
        await stranger.close()
    }

    /// No responder: the session says so once (state and one warning) and works by address.
    @Test func withoutAResponderAddressesStillWork() async throws {
        let log = LogCapture()
        let ada = try RemoteSession(sessionID: Self.session.text, displayName: "Ada",
                                    finder: FakeFinder(failure: .noResponder(call: "DNSServiceRegister")),
                                    logger: Logger(label: "test", factory: { _ in log }))
        guard case .unavailable(let error) = ada.discoveryState else {
            Issue.record("discovery state \(ada.discoveryState), not unavailable")
            return
        }
        #expect(error.code == .discoveryUnavailable)
        #expect(error.description.contains("no mDNS responder") && error.description.contains("connect by address"))
        let bob = try await RemoteSession(sessionID: Self.session.text, displayName: "Bob", discovery: false)
        let peer = try await ada.connect(to: "127.0.0.1:\(bob.port)")
        #expect(peer == bob.localPeer)
        await bob.close()
        await ada.close()
        #expect(log.lines(at: .warning).count == 1)
    }

    /// The responder going away and coming back is a state the app can read.
    @Test func aLostResponderIsTold() async throws {
        let finder = FakeFinder()
        let ada = try RemoteSession(sessionID: Self.session.text, displayName: "Ada", finder: finder)
        finder.emit(.browsed(.peer, .responderLost(retryIn: .seconds(1))))
        finder.emit(.browsed(.receiver, .responderLost(retryIn: .seconds(1))))
        let lost = await within { () -> AnalogRemoteError.Code? in
            while !Task.isCancelled {
                if case .unavailable(let error) = ada.discoveryState { return error.code }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return nil
        }
        #expect(lost == .discoveryUnavailable)
        finder.emit(.browsed(.peer, .responderBack))
        let back = await within { () -> RemoteSession.DiscoveryState in
            while !Task.isCancelled, ada.discoveryState != .active { try? await Task.sleep(for: .milliseconds(10)) }
            return ada.discoveryState
        }
        #expect(back == .active)
        await ada.close()
    }
}

/// A browser that reports what the test says.
final class FakeFinder: PeerFinder {
    private let state = Mutex<(events: (@Sendable (FinderEvent) -> Void)?, announcement: PeerAnnouncement?, stopped: Bool)>((nil, nil, false))
    let failure: DiscoveryError?

    init(failure: DiscoveryError? = nil) { self.failure = failure }

    var announcement: PeerAnnouncement? { state.withLock { $0.announcement } }
    var stopped: Bool { state.withLock { $0.stopped } }

    func start(_ announcement: PeerAnnouncement, events: @escaping @Sendable (FinderEvent) -> Void) throws(DiscoveryError) {
        if let failure { throw failure }
        state.withLock { $0 = (events, announcement, false) }
    }

    func stop() { state.withLock { $0.stopped = true } }

    func emit(_ event: FinderEvent) { state.withLock { $0.events }?(event) }
}

/// Keeps every log line.
struct LogCapture: LogHandler {
    private let store = Store()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    final class Store: Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.lines.withLock { $0.append((event.level, "\(event.message)")) }
    }

    func lines(at level: Logger.Level) -> [String] { store.lines.withLock { $0.filter { $0.0 == level }.map(\.1) } }
}
