import Discovery
import SystemIO

/// The peers of a session that DNS-SD announces, built from browse events of both roles (a
/// receiver of the session is a peer too). A value: feed it events and the time, read the
/// `.available` / `.unavailable` changes it returns.
///
/// A peer is known by TXT `peer=`, the id its hello or accept carries, so a peer found here and
/// then connected is the same ``RemoteSession/Peer``. Services without a `peer=` (announced by
/// hand) cannot be told apart from a connection and are left out, as is this session itself.
struct PeerDirectory {
    struct Sighting: Equatable {
        var peer: RemoteSession.Peer
        /// Best first (IPv4, routable IPv6, link-local).
        var addresses: [SocketAddress]
    }

    let ownID: String
    private var directories: [ServiceRole: ReceiverDirectory]
    /// Directory name (per role) → the peer id it was published under.
    private var ids: [ServiceRole: [String: String]] = [:]
    /// Available peers by id.
    private(set) var sightings: [String: Sighting] = [:]

    init(session: SessionID, ownID: String) {
        self.ownID = ownID
        directories = Dictionary(uniqueKeysWithValues: ServiceRole.allCases.map { ($0, ReceiverDirectory(session: session)) })
    }

    /// The available peers, by display name then id.
    var peers: [RemoteSession.Peer] {
        sightings.values.map(\.peer).sorted { ($0.displayName, $0.id) < ($1.displayName, $1.id) }
    }

    var nextDeadline: ContinuousClock.Instant? { directories.values.compactMap(\.nextDeadline).min() }

    mutating func apply(_ role: ServiceRole, _ event: BrowserEvent, now: ContinuousClock.Instant) -> [RemoteSession.PeerChange] {
        guard var directory = directories[role] else { return [] }
        let changes = directory.apply(event, now: now)
        directories[role] = directory
        return changes.flatMap { take($0, role: role) }
    }

    /// Drops peers the responder did not report again after it came back.
    mutating func expire(now: ContinuousClock.Instant) -> [RemoteSession.PeerChange] {
        var out: [RemoteSession.PeerChange] = []
        for role in ServiceRole.allCases {
            guard var directory = directories[role] else { continue }
            let changes = directory.expire(now: now)
            directories[role] = directory
            out += changes.flatMap { take($0, role: role) }
        }
        return out
    }

    private mutating func take(_ change: DirectoryChange, role: ServiceRole) -> [RemoteSession.PeerChange] {
        switch change {
        case .available(let found), .updated(let found):
            var out: [RemoteSession.PeerChange] = []
            let id = found.announcement.peer
            if let previous = ids[role]?[found.name], previous != id {
                out += gone(previous, role: role, name: found.name)   // restarted under the same name
            }
            guard id.count == 16, id != ownID else { return out }
            let name = found.announcement.displayName.isEmpty ? found.name : found.announcement.displayName
            let sighting = Sighting(peer: RemoteSession.Peer(id: id, displayName: name), addresses: found.addresses)
            ids[role, default: [:]][found.name] = id
            if sightings[id] == nil { out.append(.init(peer: sighting.peer, state: .available)) }
            sightings[id] = sighting
            return out
        case .unavailable(let name):
            guard let id = ids[role]?[name] else { return [] }
            return gone(id, role: role, name: name)
        case .ignored:
            return []
        }
    }

    private mutating func gone(_ id: String, role: ServiceRole, name: String) -> [RemoteSession.PeerChange] {
        ids[role]?[name] = nil
        guard let sighting = sightings.removeValue(forKey: id) else { return [] }
        return [.init(peer: sighting.peer, state: .unavailable)]
    }
}
