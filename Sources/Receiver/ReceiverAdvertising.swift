import Discovery
import Logging
import RemoteWire
import Synchronization

/// What `receive` announces on the LAN (DNS-SD, Protocol.md §6): its session, its name and its
/// timing contract. The CLI validates, this only carries.
package struct AdvertisingOptions: Sendable {
    /// The session ID `receive` uses when none is given. Controllers find it with
    /// `control --session AnalogRemote`.
    package static let defaultSession = "AnalogRemote"

    package var session: SessionID
    /// The instance name; nil = the daemon's host name.
    package var name: String?
    /// Announced as TXT `failsafe=` and `rate=`; controllers derive their resend period from it.
    package var timing: TimingContract
    /// Announced as TXT `robot=` (Protocol.md §6.2).
    package var robot: RobotID?

    package init(session: SessionID, name: String?, timing: TimingContract, robot: RobotID? = nil) {
        self.session = session
        self.name = name
        self.timing = timing
        self.robot = robot
    }
}

/// The receiver's announcement, kept up while it runs.
///
/// Contract:
/// - ``start(port:)`` registers at once, once the port is bound and before the board is opened,
///   so "no mDNS responder" (exit status 5) never touches the board.
/// - After that, advertising never stops the robot: the responder dying is logged and the
///   registration is retried with back-off (SessionAdvertiser does it), a registration refused
///   for good is logged, and the receiver keeps driving either way.
/// - Events arrive on the discovery thread; they are logged there and kept for the status line
///   (``summary``), so the receive loop needs no extra descriptor.
package final class ReceiverAdvertising: Sendable {
    package let options: AdvertisingOptions
    private let logger: Logger
    private let state = Mutex<State>(State())

    private struct State {
        var advertiser: SessionAdvertiser?
        /// The name in use once registered (the daemon may rename "robot" to "robot #2").
        var registered: String?
        var summary = "announcing…"
    }

    package init(options: AdvertisingOptions, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    deinit { stop() }

    /// Announces `port`. Throws ``DiscoveryError/noResponder(call:)`` (the CLI: exit status 5,
    /// start avahi-daemon or use `--no-advertise`) or another ``DiscoveryError`` (the daemon
    /// refused the registration: exit status 1).
    /// `peer`: TXT `peer=` (the control plane's peer id, so a program that found the receiver
    /// by DNS-SD knows it again by its accept); nil picks a random one.
    package func start(port: UInt16, peer: String? = nil) throws(DiscoveryError) {
        let session = options.session
        let advertiser = try SessionAdvertiser(session: session, name: options.name, port: port, peer: peer ?? PeerID.random(),
                                               timing: options.timing, robot: options.robot) {
            [weak self] event in self?.handle(event)
        }
        state.withLock {
            $0.advertiser = advertiser
            $0.summary = "announcing \(BrowseListing.quote(advertiser.requestedName))…"
        }
        logger.info("announcing on the LAN", metadata: [
            "session": "\(session)", "subtype": "\(session.subtype)", "name": "\(advertiser.requestedName)",
            "port": "\(port)", "peer": "\(advertiser.announcement.peer)",
            "failsafe_ms": "\(options.timing.failsafeMilliseconds)", "rate": "\(options.timing.rateHz)",
        ])
    }

    /// For the status line: `announced as "robot #2"`, or what is wrong with the announcement.
    package var summary: String { state.withLock { $0.summary } }

    /// The instance name in use, once registered.
    package var registeredName: String? { state.withLock { $0.registered } }

    /// Withdraws the announcement (a goodbye goes out). Idempotent.
    package func stop() {
        let advertiser = state.withLock { s -> SessionAdvertiser? in
            defer { s.advertiser = nil }
            return s.advertiser
        }
        advertiser?.stop()
    }

    /// On the discovery thread.
    private func handle(_ event: AdvertiserEvent) {
        let session = options.session
        switch event {
        case .registered(let name):
            let requested = state.withLock { s -> String in
                s.registered = name
                s.summary = "announced as \(BrowseListing.quote(name))"
                return s.advertiser?.requestedName ?? ""
            }
            var metadata: Logger.Metadata = ["session": "\(session)", "subtype": "\(session.subtype)"]
            if let robot = options.robot { metadata["robot"] = "\(robot)" }
            if !requested.isEmpty && requested != name { metadata["renamed_from"] = "\(requested)" }
            logger.notice("announced as \(BrowseListing.quote(name)) in session \(BrowseListing.quote(session.text))",
                          metadata: metadata)
        case .responderLost(let retry):
            state.withLock {
                $0.registered = nil
                $0.summary = "mDNS responder gone, announcing again in \(retry)"
            }
            logger.warning("the mDNS responder went away: controllers cannot find this receiver until it is back (still driving; retrying in \(retry))")
        case .failed(let error):
            state.withLock {
                $0.registered = nil
                $0.summary = "not announced"
            }
            logger.error("announcing stopped: \(error) (still driving; controllers can use --peer HOST:PORT)")
        }
    }
}
