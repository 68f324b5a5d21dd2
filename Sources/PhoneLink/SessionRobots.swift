import Console
import Controller
import Discovery
import Foundation
import Logging
import Synchronization
import SystemIO

/// The session's receivers, live, for the robot picker: a DNS-SD ``SessionBrowser`` posts to a
/// mailbox; a small thread feeds ``ReceiverDirectory`` and hands the list to the hub on every
/// change. Each robot's id is its DNS-SD instance name (unique on the link); its resend period
/// follows its announced timing contract (Protocol.md §6.3). Its name is the one DNS-SD first
/// listed for that instance: a later announcement (unsigned, like everything DNS-SD says) moves
/// it, never renames it on the students' list (Protocol.md §8.5).
package final class SessionRobots: Sendable {
    private let browser: SessionBrowser
    private let runner: LoopRunner<BrowserEvent>
    private let running = Atomic<Bool>(true)

    /// Starts browsing. No mDNS responder: ``DiscoveryError/noResponder(call:)`` (the CLI maps it
    /// to exit status 5 and offers `--peer`).
    package init(session: SessionID, hub: PhoneHub, logger: Logger) throws {
        let runner = try LoopRunner<BrowserEvent>(stopOn: StopSignals.none)
        self.runner = runner
        browser = try SessionBrowser(session: session, onEvent: runner.mailbox.post)
        let thread = Thread {
            var directory = ReceiverDirectory(session: session)
            var firstNames: [String: String] = [:]
            while true {
                guard let wake = try? runner.wait(untilInstant: directory.nextDeadline), wake.stop == nil else { return }
                let now = wake.now.instant
                var changes: [DirectoryChange] = []
                for event in wake.events { changes += directory.apply(event, now: now) }
                if let d = directory.nextDeadline, d <= now { changes += directory.expire(now: now) }
                for change in changes {
                    logger.info("\(BrowseListing.line(for: change))")
                }
                if !changes.isEmpty { hub.setRobots(Self.named(directory.receivers.compactMap(Self.robot), first: &firstNames)) }
            }
        }
        thread.name = "session robots"
        thread.start()
    }

    /// `robots` with each one's name as first listed (`first` remembers them by id).
    package static func named(_ robots: [PhoneHub.Robot], first: inout [String: String]) -> [PhoneHub.Robot] {
        robots.map { r in
            var r = r
            if let name = first[r.id] { r.name = name } else { first[r.id] = r.name }
            return r
        }
    }

    static func robot(_ r: DiscoveredReceiver) -> PhoneHub.Robot? {
        guard let address = r.destination else { return nil }
        let period = SendCadence.plan(requestedPeriod: nil, receiver: r.announcement.timing).period
        let name = r.announcement.displayName.isEmpty ? r.name : r.announcement.displayName
        return PhoneHub.Robot(id: r.name, name: name, peer: Destination.Peer(address: address, label: r.name, period: period))
    }

    /// Stops browsing and the thread. Idempotent.
    package func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        runner.requestStop()
        browser.stop()
    }
}
