import Console
import Discovery
import SystemIO

/// `analog-remote advertise`: announces one receiver and prints `registered "NAME" …` (the name in
/// use) on stdout until SIGINT/SIGTERM, then withdraws it (a goodbye goes out) and returns.
public struct AdvertiseLoop {
    let session: SessionID
    let name: String?
    let port: UInt16
    let timing: TimingContract
    let status: StatusLine

    public init(session: SessionID, name: String?, port: UInt16, timing: TimingContract, status: StatusLine) {
        self.session = session
        self.name = name
        self.port = port
        self.timing = timing
        self.status = status
    }

    /// Throws a ``DiscoveryError`` (the CLI: no responder 5, registration refused 1).
    public func run() throws -> ExitStatus {
        do {
            let signals = try SignalWatcher()
            let mailbox = try EventMailbox<AdvertiserEvent>()
            let advertiser: SessionAdvertiser
            do throws(DiscoveryError) {
                advertiser = try SessionAdvertiser(session: session, name: name ?? HostName.current(), port: port,
                                                   timing: timing, onEvent: mailbox.post)
            } catch {
                throw error
            }
            defer { advertiser.stop() }
            status.update("announcing session \"\(session)\" (\(session.subtype)) on port \(port)…", force: true)
            while true {
                let ready = try Poller.wait([(mailbox.descriptor, .readable), (signals.readableDescriptor, .readable)],
                                            until: nil)
                if !ready[1].isEmpty { break }
                for event in mailbox.drain() {
                    switch event {
                    case .registered(let inUse):
                        let requested = advertiser.requestedName
                        let renamed = inUse != requested && !requested.isEmpty
                            ? " (renamed from \(BrowseListing.quote(requested)): the name was taken)" : ""
                        status.clear()
                        StandardOutput.write("registered \(BrowseListing.quote(inUse)) \(SessionID.serviceType) subtype \(session.subtype) port \(port) peer \(advertiser.announcement.peer)\(renamed)" + "\n")
                        status.update("announced as \"\(inUse)\" in session \"\(session)\"", force: true)
                    case .responderLost(let retry):
                        status.clear()
                        StandardOutput.write(BrowseListing.responderLost(retryIn: retry) + "\n")
                    case .failed(let error):
                        throw error
                    }
                }
            }
            status.clear()
            return .success
        } catch let error as SystemError {
            throw UserFacingError("advertise: \(error)", status: .failure)
        }
    }
}
