#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Controller
import Foundation
import Logging
import RemoteWire
import SystemIO

/// One page = one controller on the UDP side: its own UDP socket (so its own source address and
/// port at the receiver), its own hello with the name the student typed, its own pairing code,
/// RTT and loss. It is the `analog-remote control` send loop (``SendLoop`` with
/// ``ControlSession``), run on a thread of its own with a ``PhoneSource`` as its input.
///
/// Ways out, each ending in neutral ×3 then bye (the send loop's own way out): ``stop(_:)``
/// (the page said stop, was hidden or closed, its WebSocket dropped), SIGINT/SIGTERM to the
/// server, the page going silent (``PhoneSource/Timing/silent``), the receiver refusing.
package final class PhoneController: Sendable {
    package struct Options: Sendable {
        package var displayName: String
        package var pairingCode: String?
        package var session: String
        package var rate: Double
        package var timing: PhoneSource.Timing
        /// `web --record-dir`: where this drive is recorded (``DriveRecorder``), or nil.
        package var recordings: PhoneRecordings?

        package init(displayName: String, pairingCode: String?, session: String, rate: Double = Double(SendRate.standardHz),
                    timing: PhoneSource.Timing = .init()) {
            self.displayName = displayName
            self.pairingCode = pairingCode
            self.session = session
            self.rate = rate
            self.timing = timing
        }
    }

    package let destination: Destination
    private let runner: LoopRunner<PhoneInput>
    private let done: EventFlag

    /// Starts the controller's thread. `report` and `finished` are called on that thread.
    package init(_ options: Options, peer: Destination.Peer, logger: Logger,
                report: @escaping @Sendable (PageReport) -> Void,
                finished: @escaping @Sendable (EndReason) -> Void) throws(SystemError) {
        destination = try Destination(peer)
        runner = try LoopRunner<PhoneInput>(stopOn: StopSignals.standard, mailboxCapacity: 64)
        done = try EventFlag()
        let (destination, runner, done) = (destination, runner, done)
        let thread = Thread {
            let source = PhoneSource(name: "phone \"\(options.displayName)\"", mailbox: runner.mailbox, timing: options.timing)
            var loop = SendLoop(source: source, destination: destination, schedule: .init(rate: options.rate),
                                signals: runner.stopToken, status: StatusLine(quiet: true))
            loop.armsFatalSignalGuard = false
            let session = ControlSession(.init(displayName: options.displayName, pairingCode: options.pairingCode,
                                               session: options.session), logger: logger)
            let recorder = Self.recorder(options, session: session, peer: destination.current, logger: logger)
            if let recorder { loop.onSent = { recorder.sent($0, at: $1) } }
            // The phone's companion last: it is the loop's `companion` (it wraps the states).
            loop.companions = [recorder as (any SendLoopCompanion)?, PhoneCompanion(session: session, report: report)].compactMap { $0 }
            let reason: EndReason
            do {
                reason = try loop.run()
            } catch {
                reason = .deviceLost("\(source.name): \(error)")
            }
            recorder?.end(reason)
            withExtendedLifetime(runner) {}
            done.raise()
            finished(reason)
        }
        thread.name = "phone \(options.displayName)"
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// Hands the page's state to the loop (any thread; never blocks).
    package func post(_ input: PhoneInput) { runner.mailbox.post(input) }

    /// Ends the controller: neutral ×3 at once, then bye. Any thread; never blocks.
    package func stop(_ why: String) { runner.mailbox.post(.stop(why)) }

    /// True once the loop has ended (its neutral packets are out).
    package var isFinished: Bool { done.isRaised }

    /// Blocks until the loop has ended or `timeout` passed; returns whether it ended.
    @discardableResult
    package func wait(timeout: Duration) -> Bool { done.wait(timeout: timeout) }
}
