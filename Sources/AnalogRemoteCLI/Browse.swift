import ArgumentParser
import Console
import Discovery
import SystemIO

struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "List the receivers of a session, live.",
        discussion: """
            Prints one line per change on stdout until Ctrl-C: `SECONDS available "NAME" ADDRESS:PORT v=1 \
            peer=… failsafe=MS rate=HZ if=IFACE`, then `updated …`, `unavailable "NAME"`, or `ignored "NAME": why`. \
            With --once: browses for --timeout seconds, prints each receiver found (same fields, no time), \
            exits 0. Needs a running avahi-daemon (exit 5 otherwise).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The session ID shared by receivers and controllers (any text).")
    var session: String

    @Flag(help: "Browse for --timeout seconds, print what was found, exit (for scripts).")
    var once = false

    @Option(help: "Seconds to browse with --once.")
    var timeout: Double = 2

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be in 0…3600 seconds") }
    }

    func run() throws {
        try runReporting {
            let sessionID = try SessionID(session)
            let status = global.bootstrap()
            return try BrowseRun(session: sessionID, once: once ? .milliseconds(Int(timeout * 1000)) : nil,
                                 status: status).run()
        }
    }
}

/// The browse loop: poll the browser's mailbox and the signal pipe, print changes.
struct BrowseRun {
    let session: SessionID
    let once: Duration?
    let status: StatusLine

    func run() throws -> ExitStatus {
        do {
            let signals = try SignalWatcher()
            let mailbox = try EventMailbox<BrowserEvent>()
            let browser: SessionBrowser
            do throws(DiscoveryError) {
                browser = try SessionBrowser(session: session, onEvent: mailbox.post)
            } catch {
                throw error.userFacing()
            }
            defer { browser.stop() }
            let started = ContinuousClock.now
            let end = once.map { started + $0 }
            var directory = ReceiverDirectory(session: session)
            status.update("browsing session \"\(session)\" (\(session.subtype))…", force: true)
            while true {
                let wake = [end, directory.nextDeadline].compactMap { $0 }.min()
                let ready = try Poller.wait([(mailbox.descriptor, .readable), (signals.readableDescriptor, .readable)],
                                            until: wake)
                if !ready[1].isEmpty { break }
                let now = ContinuousClock.now
                var changes: [DirectoryChange] = []
                for event in mailbox.drain() {
                    changes += directory.apply(event, now: now)
                    if once == nil { note(event, at: now - started) }
                }
                changes += directory.expire(now: now)
                if once == nil {
                    for change in changes { say(BrowseListing.elapsed(now - started) + " " + BrowseListing.line(for: change)) }
                }
                let n = directory.receivers.count
                status.update("session \"\(session)\": \(n) receiver\(n == 1 ? "" : "s")")
                if let end, now >= end { break }
            }
            status.clear()
            if once != nil {
                for r in directory.receivers { writeStdoutLine(BrowseListing.describe(r)) }
                if directory.receivers.isEmpty {
                    StandardError.write("analog-remote: no receivers in session \"\(session)\" (\(session.subtype))\n")
                }
            }
            return .success
        } catch let error as SystemError {
            throw UserFacingError("browse: \(error)", status: .failure)
        }
    }

    private func note(_ event: BrowserEvent, at elapsed: Duration) {
        switch event {
        case .responderLost(let retry):
            say(BrowseListing.elapsed(elapsed) + " responder-lost: the mDNS responder went away; retrying in \(retry)")
        case .responderBack:
            say(BrowseListing.elapsed(elapsed) + " responder-back")
        default:
            break
        }
    }

    private func say(_ line: String) {
        status.clear()
        writeStdoutLine(line)
    }
}
