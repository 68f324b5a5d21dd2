import RemoteWire

/// What a ``SessionAdvertiser`` reports, from the loop thread.
package enum AdvertiserEvent: Equatable, Sendable {
    /// The service is announced; `name` is the display name in use. It differs from the
    /// requested name when another receiver of the same session had it (the responder renamed
    /// the instance, which reads back as "robot #2"): show this one to people.
    case registered(name: String)
    /// The mDNS responder went away; the advertiser re-registers when it is back (back-off
    /// 1, 2, 4 … 30 s) and reports ``registered(name:)`` again.
    case responderLost(retryIn: Duration)
    /// Registration failed for good (not a missing responder); the advertiser has stopped.
    case failed(DiscoveryError)
}

/// Announces one receiver of a session (or, with ``ServiceRole/peer``, a program's session peer):
/// instance name, the role's service type with the session's subtype, port, and the TXT record
/// of its ``ReceiverAnnouncement``.
///
/// The instance name is the display name plus the session's mark, `robot2 [6c11ba5f]`
/// (``InstanceName/forDisplay(_:in:)``), so the same display name in two sessions never clashes.
/// A name already taken on the same daemon (which Avahi reports as a conflict instead of
/// renaming) is retried as "… #2", "… #3"; a clash with another host is renamed by the daemon
/// itself. Either way the display name in use arrives as ``AdvertiserEvent/registered(name:)``.
package final class SessionAdvertiser: Sendable {
    package let announcement: ReceiverAnnouncement
    /// The display name asked for (TXT `name=`).
    package let requestedName: String
    /// The instance name asked for: the display name and the session's mark.
    package let requestedInstance: String
    private let loop: DNSServiceLoop
    private let clientID: UInt64

    /// Starts announcing. Throws ``DiscoveryError/noResponder(call:)`` at once when no mDNS
    /// responder is reachable. `name` is the display name (TXT `name=` in full; the instance
    /// name keeps its first ``InstanceName/maximumDisplayByteCount`` bytes); nil uses this
    /// machine's host name. `peer` is TXT `peer=`, the id a hello from this process carries.
    package init(session: SessionID, name: String?, port: UInt16, peer: String = PeerID.random(),
                timing: TimingContract = .standard, robot: RobotID? = nil, role: ServiceRole = .receiver, loop: DNSServiceLoop? = nil,
                onEvent: @escaping @Sendable (AdvertiserEvent) -> Void) throws(DiscoveryError) {
        let loop = try DNSServiceLoop.given(loop)
        let display = name ?? HostName.current() ?? "receiver"
        let instanceName = InstanceName.forDisplay(display, in: session)
        let announcement = ReceiverAnnouncement(session: session, peer: peer, displayName: display, timing: timing, robot: robot)
        self.announcement = announcement
        self.requestedName = display
        self.requestedInstance = instanceName
        self.loop = loop
        let service = AdvertiseEngine.Service(name: instanceName, type: session.registrationType(role), port: port,
                                              txt: announcement.txtRecord.encoded, session: session)
        clientID = try loop.perform("DNSServiceRegister") { (core) throws(DiscoveryError) -> UInt64 in
            let engine = AdvertiseEngine(service: service, emit: onEvent)
            try engine.start(core)
            return core.adopt(engine)
        }
    }

    deinit { stop() }

    /// Withdraws the announcement (a goodbye goes out) before returning, unless called from a
    /// handler. Idempotent.
    package func stop() {
        loop.stop(client: clientID)
    }
}

final class AdvertiseEngine: LoopClient {
    struct Service: Sendable {
        var name: String?
        let type: String
        let port: UInt16
        let txt: [UInt8]
        let session: SessionID
    }

    /// How many "name #N" to try after local conflicts before giving up.
    static let maximumRenames = 20
    static let conflictCode: Int32 = -65548

    private var service: Service
    private let emit: @Sendable (AdvertiserEvent) -> Void
    private var op: OperationID?
    private var renames = 0
    private var reportedName: String?
    private var backoff = Backoff()
    private var retryTimer: UInt64?
    private var stopped = false

    init(service: Service, emit: @escaping @Sendable (AdvertiserEvent) -> Void) {
        self.service = service
        self.emit = emit
    }

    /// Registers; a synchronous local name conflict is retried under the next alternative name.
    func start(_ core: LoopCore) throws(DiscoveryError) {
        while true {
            do {
                op = try core.register(name: service.name, type: service.type, port: service.port,
                                       txt: service.txt) { [weak self, unowned core] reply in
                    self?.replied(reply, core)
                }
                return
            } catch .failed(_, let code) where code == Self.conflictCode && renameAvailable() {
                continue
            }
        }
    }

    /// Moves to the next alternative name; false when there is none left to try.
    private func renameAvailable() -> Bool {
        guard let name = service.name, renames < Self.maximumRenames else { return false }
        renames += 1
        service.name = InstanceName.alternative(to: name)
        return true
    }

    func stop(_ core: LoopCore) {
        stopped = true
        core.cancelTimer(retryTimer)
        core.cancel(op)
        op = nil
    }

    private func replied(_ reply: Reply, _ core: LoopCore) {
        switch reply {
        case .registered(let instance):
            backoff.reset()
            let name = InstanceName.parse(instance, in: service.session)?.display ?? instance
            if name != reportedName {
                reportedName = name
                emit(.registered(name: name))
            }
        case .failed(let code) where code == DiscoveryError.unknownCode:
            responderLost(core)
        case .failed(let code) where code == Self.conflictCode && renameAvailable():
            op = nil
            restart(core)
        case .failed(let code):
            op = nil
            stopped = true
            emit(.failed(.failed(call: "DNSServiceRegister", code: code)))
        default:
            break
        }
    }

    private func restart(_ core: LoopCore) {
        do {
            try start(core)
        } catch .noResponder {
            responderLost(core)
        } catch {
            stopped = true
            emit(.failed(error))
        }
    }

    private func responderLost(_ core: LoopCore) {
        guard !stopped, retryTimer == nil else { return }
        core.cancel(op)
        op = nil
        reportedName = nil
        let delay = backoff.nextDelay()
        emit(.responderLost(retryIn: delay))
        scheduleRetry(after: delay, core)
    }

    private func scheduleRetry(after delay: Duration, _ core: LoopCore) {
        retryTimer = core.schedule(after: delay) { [weak self] core in
            guard let self, !self.stopped else { return }
            self.retryTimer = nil
            do throws(DiscoveryError) {
                try self.start(core)
            } catch .noResponder {
                self.scheduleRetry(after: self.backoff.nextDelay(), core)
            } catch {
                self.stopped = true
                self.emit(.failed(error))
            }
        }
    }
}
