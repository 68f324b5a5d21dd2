import SystemIO

/// `analog-remote advertise`: announces one receiver and prints `registered "NAME" …` (the name in
/// use) on stdout until SIGINT/SIGTERM, then withdraws it (a goodbye goes out) and returns.
package struct AdvertiseLoop {
    let session: SessionID
    let name: String?
    let port: UInt16
    let timing: TimingContract
    let output: any ListingOutput

    package init(session: SessionID, name: String?, port: UInt16, timing: TimingContract, output: any ListingOutput) {
        self.session = session
        self.name = name
        self.port = port
        self.timing = timing
        self.output = output
    }

    /// Throws a ``DiscoveryError`` (the CLI: no responder 5, registration refused 1).
    package func run() throws -> CommandOutcome {
        do {
            let runner = try LoopRunner<AdvertiserEvent>()
            let advertiser: SessionAdvertiser
            advertiser = try SessionAdvertiser(session: session, name: name ?? HostName.current(), port: port,
                                               timing: timing, onEvent: runner.mailbox.post)
            defer { advertiser.stop() }
            output.status("announcing session \"\(session)\" (\(session.subtype)) on port \(port)…", force: true)
            while true {
                let wake = try runner.wait(until: nil)
                if wake.stop != nil { break }
                for event in wake.events {
                    switch event {
                    case .registered(let inUse):
                        let requested = advertiser.requestedName
                        let renamed = inUse != requested && !requested.isEmpty
                            ? " (renamed from \(BrowseListing.quote(requested)): the name was taken)" : ""
                        output.line("registered \(BrowseListing.quote(inUse)) \(SessionID.serviceType) subtype \(session.subtype) port \(port) peer \(advertiser.announcement.peer)\(renamed)")
                        output.status("announced as \"\(inUse)\" in session \"\(session)\"", force: true)
                    case .responderLost(let retry):
                        output.line(BrowseListing.responderLost(retryIn: retry))
                    case .failed(let error):
                        throw error
                    }
                }
            }
            output.clearStatus()
            return .done
        } catch let error as SystemError {
            throw CommandFailure("advertise: \(error)", kind: .failed)
        }
    }
}
