import Discovery
import Synchronization

/// What a ``PeerFinder`` reports, from its own thread.
enum FinderEvent: Sendable {
    /// A browse of one role's services (receivers, or other programs' sessions).
    case browsed(ServiceRole, BrowserEvent)
    /// This session's own announcement.
    case advertised(AdvertiserEvent)
}

/// What a ``RemoteSession`` announces about itself (Protocol.md §7.13).
struct PeerAnnouncement: Sendable {
    var session: SessionID
    var displayName: String
    /// 16 hex digits: the id its hello carries.
    var peerID: String
    var port: UInt16
}

/// Finds a session's peers and announces this one. The real one is DNS-SD (``DNSSDPeerFinder``);
/// tests inject their own events.
protocol PeerFinder: Sendable {
    /// Announces `announcement` and browses the session's receivers and peers. Throws at once
    /// when discovery cannot start (``DiscoveryError/noResponder(call:)``: no Avahi). `events`
    /// may be called on any thread, and must not block.
    func start(_ announcement: PeerAnnouncement, events: @escaping @Sendable (FinderEvent) -> Void) throws(DiscoveryError)
    /// Withdraws the announcement and stops browsing. Idempotent.
    func stop()
}

/// The Discovery module's advertiser and browsers, as `analog-remote` uses them: the session is
/// announced under the peer service type, and both service types are browsed (a receiver is a
/// peer of its session too). Lookups are `.once`: queries that do not grow with the class (§6.4).
final class DNSSDPeerFinder: PeerFinder {
    private let parts = Mutex<(advertiser: SessionAdvertiser?, browsers: [SessionBrowser])>((nil, []))

    func start(_ announcement: PeerAnnouncement, events: @escaping @Sendable (FinderEvent) -> Void) throws(DiscoveryError) {
        let advertiser = try SessionAdvertiser(session: announcement.session, name: announcement.displayName,
                                               port: announcement.port, peer: announcement.peerID, role: .peer) {
            events(.advertised($0))
        }
        var browsers: [SessionBrowser] = []
        do {
            for role in ServiceRole.allCases {
                browsers.append(try SessionBrowser(session: announcement.session, role: role, lookups: .once) {
                    events(.browsed(role, $0))
                })
            }
        } catch {
            advertiser.stop()
            for browser in browsers { browser.stop() }
            throw error
        }
        parts.withLock { $0 = (advertiser, browsers) }
    }

    func stop() {
        let (advertiser, browsers) = parts.withLock { p in
            defer { p = (nil, []) }
            return p
        }
        advertiser?.stop()
        for browser in browsers { browser.stop() }
    }
}
