import SystemIO

/// `analog-remote browse`: polls the browser's mailbox and the signal pipe and prints changes
/// (BrowseListing formats) on stdout, one unbuffered line each, through ``ListingOutput``.
package struct BrowseLoop {
    let session: SessionID
    let once: Duration?
    let follow: Bool
    let receiver: String?
    let requestedRateHz: Int?
    let output: any ListingOutput
    let followLine: (FollowReceiver.Action) -> String

    /// `once`: browse that long, then print what was found; nil: live until SIGINT/SIGTERM.
    /// `follow`: also run ``FollowReceiver`` and print what a controller would do, each action
    /// in the words of `followLine` (the controller's cadence is not Discovery's to know).
    package init(session: SessionID, once: Duration?, follow: Bool, receiver: String?, requestedRateHz: Int?,
                output: any ListingOutput, followLine: @escaping (FollowReceiver.Action) -> String) {
        self.session = session
        self.once = once
        self.follow = follow
        self.receiver = receiver
        self.requestedRateHz = requestedRateHz
        self.output = output
        self.followLine = followLine
    }

    /// Returns `.done` when stopped by a signal or at the end of `once`. Throws a
    /// ``DiscoveryError`` (no responder) or a ``CommandFailure``
    /// (several receivers with `follow` and no name).
    package func run() throws -> CommandOutcome {
        do {
            let runner = try LoopRunner<BrowserEvent>()
            let browser: SessionBrowser
            browser = try SessionBrowser(session: session, onEvent: runner.mailbox.post)
            defer { browser.stop() }
            let started = ContinuousClock.now
            let end = once.map { started + $0 }
            var directory = ReceiverDirectory(session: session)
            var follower = FollowReceiver(.init(session: session, receiverName: receiver), now: started)
            output.status("browsing session \"\(session)\" (\(session.subtype))…", force: true)
            while true {
                let deadline = [end, directory.nextDeadline, follow ? follower.nextDeadline : nil].compactMap { $0 }.min()
                let wake = try runner.wait(untilInstant: deadline)
                if wake.stop != nil { break }
                let now = ContinuousClock.now
                let stamp = BrowseListing.elapsed(now - started) + " "
                var changes: [DirectoryChange] = []
                var actions: [FollowReceiver.Action] = []
                for event in wake.events {
                    changes += directory.apply(event, now: now)
                    if follow { actions += follower.handle(event, now: now) }
                    if once == nil && !follow { note(event, stamp) }
                }
                changes += directory.expire(now: now)
                if follow { actions += follower.tick(now: now) }
                if once == nil {
                    for change in changes { say(stamp + BrowseListing.line(for: change)) }
                    for action in actions { say(stamp + followLine(action)) }
                }
                if follow, let list = actions.lazy.compactMap(\.ambiguousList).first {
                    for r in list { output.line(BrowseListing.describe(r)) }
                    throw CommandFailure("\(list.count) receivers in session \"\(session)\" and none chosen: pick one with --receiver NAME",
                                         kind: .ambiguousReceiver)
                }
                let n = directory.receivers.count
                output.status(follow ? follower.summary : "session \"\(session)\": \(n) receiver\(n == 1 ? "" : "s")", force: false)
                if let end, now >= end { break }
            }
            output.clearStatus()
            if once != nil {
                for r in directory.receivers where !follow || r.name == follower.followed {
                    output.line(BrowseListing.describe(r))
                }
                if directory.receivers.isEmpty {
                    output.problem("analog-remote: no receivers in session \"\(session)\" (\(session.subtype))")
                }
            }
            return .done
        } catch let error as SystemError {
            throw CommandFailure("browse: \(error)", kind: .failed)
        }
    }

    private func note(_ event: BrowserEvent, _ stamp: String) {
        switch event {
        case .responderLost(let retry):
            say(stamp + BrowseListing.responderLost(retryIn: retry))
        case .responderBack:
            say(stamp + "responder-back")
        default:
            break
        }
    }

    private func say(_ line: String) { output.line(line) }
}

extension FollowReceiver.Action {
    var ambiguousList: [DiscoveredReceiver]? {
        if case .ambiguous(let list) = self { return list }
        return nil
    }
}
