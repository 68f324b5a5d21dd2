import Console
import Discovery
import SystemIO

/// `analog-remote browse`: polls the browser's mailbox and the signal pipe and prints changes
/// (BrowseListing formats) on stdout, one unbuffered line each.
public struct BrowseLoop {
    let session: SessionID
    let once: Duration?
    let follow: Bool
    let receiver: String?
    let requestedRateHz: Int?
    let status: StatusLine

    /// `once`: browse that long, then print what was found; nil: live until SIGINT/SIGTERM.
    /// `follow`: also run ``FollowReceiver`` and print what a controller would do.
    public init(session: SessionID, once: Duration?, follow: Bool, receiver: String?, requestedRateHz: Int?,
                status: StatusLine) {
        self.session = session
        self.once = once
        self.follow = follow
        self.receiver = receiver
        self.requestedRateHz = requestedRateHz
        self.status = status
    }

    /// Returns `.success` when stopped by a signal or at the end of `once`. Throws a
    /// ``DiscoveryError`` (no responder: exit status 5 in the CLI) or a ``UserFacingError``
    /// (several receivers with `follow` and no name: 6).
    public func run() throws -> ExitStatus {
        do {
            let signals = try SignalWatcher()
            let mailbox = try EventMailbox<BrowserEvent>()
            let browser: SessionBrowser
            do throws(DiscoveryError) {
                browser = try SessionBrowser(session: session, onEvent: mailbox.post)
            } catch {
                throw error
            }
            defer { browser.stop() }
            let started = ContinuousClock.now
            let end = once.map { started + $0 }
            var directory = ReceiverDirectory(session: session)
            var follower = FollowReceiver(.init(session: session, receiverName: receiver), now: started)
            status.update("browsing session \"\(session)\" (\(session.subtype))…", force: true)
            while true {
                let wake = [end, directory.nextDeadline, follow ? follower.nextDeadline : nil].compactMap { $0 }.min()
                let ready = try Poller.wait([(mailbox.descriptor, .readable), (signals.readableDescriptor, .readable)],
                                            until: wake)
                if !ready[1].isEmpty { break }
                let now = ContinuousClock.now
                let stamp = BrowseListing.elapsed(now - started) + " "
                var changes: [DirectoryChange] = []
                var actions: [FollowReceiver.Action] = []
                for event in mailbox.drain() {
                    changes += directory.apply(event, now: now)
                    if follow { actions += follower.handle(event, now: now) }
                    if once == nil && !follow { note(event, stamp) }
                }
                changes += directory.expire(now: now)
                if follow { actions += follower.tick(now: now) }
                if once == nil {
                    for change in changes { say(stamp + BrowseListing.line(for: change)) }
                    for action in actions { say(stamp + BrowseListing.line(for: action, requestedRateHz: requestedRateHz)) }
                }
                if follow, let list = actions.lazy.compactMap(\.ambiguousList).first {
                    status.clear()
                    for r in list { StandardOutput.write(BrowseListing.describe(r) + "\n") }
                    throw UserFacingError("\(list.count) receivers in session \"\(session)\" and none chosen: pick one with --receiver NAME",
                                          status: .ambiguousReceiver)
                }
                let n = directory.receivers.count
                status.update(follow ? follower.summary : "session \"\(session)\": \(n) receiver\(n == 1 ? "" : "s")")
                if let end, now >= end { break }
            }
            status.clear()
            if once != nil {
                for r in directory.receivers where !follow || r.name == follower.followed {
                    StandardOutput.write(BrowseListing.describe(r) + "\n")
                }
                if directory.receivers.isEmpty {
                    StandardError.write("analog-remote: no receivers in session \"\(session)\" (\(session.subtype))\n")
                }
            }
            return .success
        } catch let error as SystemError {
            throw UserFacingError("browse: \(error)", status: .failure)
        }
    }

    private func note(_ event: BrowserEvent, _ stamp: String) {
        switch event {
        case .responderLost(let retry):
            say(stamp + BrowseListing.line(for: .discoveryPaused(retryIn: retry)))
        case .responderBack:
            say(stamp + BrowseListing.line(for: .discoveryResumed))
        default:
            break
        }
    }

    private func say(_ line: String) {
        status.clear()
        StandardOutput.write(line + "\n")
    }
}

extension FollowReceiver.Action {
    var ambiguousList: [DiscoveredReceiver]? {
        if case .ambiguous(let list) = self { return list }
        return nil
    }
}
