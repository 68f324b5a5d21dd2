import Console
import ControlPlane
import Controller
import Discovery
import Foundation
import Logging
import RemoteWire
import SystemIO

/// Drives one robot: finds its receiver, says hello, and keeps sending the state you set — on
/// every change at once, and unchanged at the steady rate the receiver's failsafe needs.
///
/// ```swift
/// let robot = try await RobotController(.address("robot.local:27183"), displayName: "Ada")
/// robot.send(tilt: 0, buttons: .forward)
/// ```
///
/// The robot stops (the neutral state, three times, then a goodbye) when you call ``close()``,
/// when the controller is released (the last reference dropped, for example because the task
/// holding it was cancelled), or when the receiver refuses it. Nothing here calls back into
/// your code: what the robot does arrives through ``states``.
///
/// Under the hood this is the `analog-remote control` send loop and control session, run on a
/// thread of its own; every method may be called from any task or thread.
public final class RobotController: Sendable {
    /// Which receiver to drive.
    public enum Receiver: Hashable, Sendable {
        /// `HOST:PORT` or `[IPv6]:PORT`, e.g. `"robot.local:27183"` or `"127.0.0.1:27183"`.
        case address(String)
        /// The receiver announced in `session` under this name (its DNS-SD instance name) or
        /// with this peer id. Needs an mDNS responder (Avahi).
        case named(String, session: String)
        /// The one receiver announced in `session` (several are an error: name one).
        case onlyReceiver(session: String)
    }

    private let mailbox: EventMailbox<ControllerCommand>
    private let finished: OneShot<Void>
    private let broadcast: Broadcast<RobotState>
    /// The name the receiver accepted this controller under (its display name), or empty when it
    /// answers no control messages (an older receiver).
    public let receiverName: String

    /// Finds the receiver and connects: returns once it accepted this controller.
    ///
    /// - Parameters:
    ///   - receiver: where the robot is.
    ///   - displayName: how this controller appears on the receiver and to a teacher (at most 255
    ///     bytes of UTF-8).
    ///   - pairingCode: the code a receiver started with `--accept paired` shows.
    ///   - rate: states per second while nothing changes (1…1000; the receiver's failsafe needs
    ///     at least 4 per failsafe period — the default is the one every receiver accepts).
    ///   - timeout: how long to wait for the receiver's answer.
    ///   - logger: where the controller says what it does — the lines `analog-remote control`
    ///     logs (the receiver found and followed, the sending plan, refusals); nil logs nothing.
    /// - Throws: ``AnalogRemoteError`` — `.invalidArgument` (an address without a port, say),
    ///   `.networkUnavailable`, `.discoveryUnavailable`, `.refused`, `.timedOut`;
    ///   `CancellationError` when the task is cancelled while waiting. Nothing moves before this
    ///   returns.
    public init(_ receiver: Receiver, displayName: String, pairingCode: String? = nil, rate: Double = 50,
                timeout: Duration = .seconds(10), logger: Logger? = nil) async throws {
        guard SendRate.range.contains(Int(rate.rounded())), rate.isFinite else {
            throw AnalogRemoteError(.invalidArgument, "rate \(rate): give 1…1000 states per second")
        }
        guard !displayName.isEmpty, displayName.utf8.count <= 255 else {
            throw AnalogRemoteError(.invalidArgument, "display name: give 1…255 bytes of UTF-8")
        }
        let destination: Destination
        var target: SessionTarget?
        do {
            switch receiver {
            case .address(let text):
                let address = try Arguments.address(text)
                destination = try Destination(Destination.Peer(address: address, label: text))
            case .named(_, let session), .onlyReceiver(let session):
                let id = try Arguments.session(session, parameter: "session")
                if case .named(let name, _) = receiver {
                    target = SessionTarget(session: id, receiver: name, requestedRate: nil)
                } else {
                    target = SessionTarget(session: id, receiver: nil, requestedRate: nil)
                }
                destination = try Destination(nil)
            }
        } catch let error as AnalogRemoteError {
            throw error
        } catch {
            throw AnalogRemoteError(.networkUnavailable, "cannot set up the controller: \(error)")
        }
        let mailbox: EventMailbox<ControllerCommand>
        do {
            mailbox = try EventMailbox<ControllerCommand>(capacity: 64)
        } catch {
            throw AnalogRemoteError(.networkUnavailable, "cannot set up the controller: \(error)")
        }
        let connected = OneShot<Result<String, AnalogRemoteError>>()
        let finished = OneShot<Void>()
        let broadcast = Broadcast<RobotState>()
        Self.start(Loop(displayName: displayName, pairingCode: pairingCode, rate: rate, target: target,
                        destination: destination, mailbox: mailbox,
                        logger: logger ?? Logger.silent("AnalogRemoteKit.RobotController")),
                   connected: connected, finished: finished, states: broadcast)
        let result = await connected.value(within: timeout) {
            .failure(AnalogRemoteError(.timedOut, "no answer from \(Self.describe(receiver)) within \(timeout) (is the receiver running there, on that port?)"))
        } cancelled: {
            .failure(AnalogRemoteError(.closed, "cancelled while connecting"))
        }
        switch result {
        case .success(let name):
            self.mailbox = mailbox
            self.finished = finished
            self.broadcast = broadcast
            receiverName = name
        case .failure(let error):
            mailbox.post(.stop("connect failed"))
            await finished.value
            try Task.checkCancellation()
            throw error
        }
    }

    /// Stops the robot when the last reference goes (neutral ×3 and a goodbye, from the loop's
    /// own thread; nothing waits for it here).
    deinit {
        mailbox.post(.stop("released"))
    }

    /// Sets the state the robot is driven with: sent at once, then repeated at the steady rate
    /// until the next call. Any thread; never blocks.
    ///
    /// - Parameters:
    ///   - tilt: the steering, in radians: 0 is straight on, positive turns right, ±π/2 is full
    ///     lock (larger values are clamped; a value that is not finite counts as 0).
    ///   - buttons: the buttons held: `.forward` or `.backward` drive, the rest are mapped by the
    ///     receiver (on the kit, `.a` and `.b` light the LEDs).
    public func send(tilt: Double, buttons: Buttons = []) {
        let angle = tilt.isFinite ? Float(max(-Double(ControllerState.maxAngle), min(Double(ControllerState.maxAngle), tilt))) : 0
        mailbox.post(.state(ControllerState(angle: angle, buttons: buttons.intersection(.defined))))
    }

    /// Stops the robot (neutral) and returns the controller to rest, without leaving.
    public func stop() {
        mailbox.post(.state(.neutral))
    }

    /// What the robot does for this controller, each change once; a new sequence starts with
    /// the latest state. Ends when the controller is closed or the receiver refused it. Ending
    /// the iteration (leaving the loop, cancelling its task) does not close the controller.
    public var states: AsyncStream<RobotState> { broadcast.subscribe() }

    /// Sends neutral (three times) and a goodbye, and returns once they are out. Idempotent.
    public func close() async {
        mailbox.post(.stop("closed"))
        await finished.value
    }

    static func describe(_ receiver: Receiver) -> String {
        switch receiver {
        case .address(let text): text
        case .named(let name, let session): "\(name.debugDescription) in session \(session.debugDescription)"
        case .onlyReceiver(let session): "the receiver of session \(session.debugDescription)"
        }
    }
}

extension RobotController {
    /// What the loop's thread is built from (all Sendable, handed over once).
    struct Loop: Sendable {
        var displayName: String
        var pairingCode: String?
        var rate: Double
        var target: SessionTarget?
        var destination: Destination
        var mailbox: EventMailbox<ControllerCommand>
        var logger: Logger
    }

    /// Runs the send loop on a thread of its own until a stop; resolves `connected` with the
    /// first answer (or why there was none) and `finished` once neutral and goodbye are out.
    static func start(_ loop: Loop, connected: OneShot<Result<String, AnalogRemoteError>>, finished: OneShot<Void>,
                      states: Broadcast<RobotState>) {
        let thread = Thread {
            defer {
                states.finish()
                finished.resolve(())
            }
            let logger = loop.logger
            let status = StatusLine(quiet: true)
            let follower: SessionFollower?
            do {
                follower = try loop.target.map { target throws(DiscoveryError) in
                    try SessionFollower(target: target, destination: loop.destination, logger: logger, status: status)
                }
                try follower?.chooseAtStart(interactive: false)
            } catch let error as DiscoveryError {
                connected.resolve(.failure(AnalogRemoteError(.discoveryUnavailable, "\(error)")))
                return
            } catch {
                connected.resolve(.failure(AnalogRemoteError(.networkUnavailable, "\(error)")))
                return
            }
            defer { follower?.stop() }
            // No signals: the process's are the program's; `close()` stops the loop through its input.
            let runner: LoopRunner<Never>
            do {
                runner = try LoopRunner(stopOn: StopSignals.none)
            } catch {
                connected.resolve(.failure(AnalogRemoteError(.networkUnavailable, "cannot set up the controller: \(error)")))
                return
            }
            let source = ControllerInput(name: "AnalogRemoteKit", mailbox: loop.mailbox)
            let session = ControlSession(.init(displayName: loop.displayName, pairingCode: loop.pairingCode,
                                               session: loop.target?.session.text ?? ""), logger: logger)
            // The assembly `analog-remote control` uses, with the state watcher in the session's place.
            var sendLoop = DriverLoop.make(source: source, destination: loop.destination, rate: loop.rate, signals: runner.stopToken,
                                           status: status, session: session, follower: follower) {
                StateWatcher(session: $0, connected: connected, states: states)
            }
            sendLoop.armsFatalSignalGuard = false
            let reason: EndReason
            do {
                reason = try sendLoop.run()
            } catch {
                reason = .deviceLost("\(error)")
            }
            switch reason {
            case .refused(let why): connected.resolve(.failure(AnalogRemoteError(.refused, why)))
            default:
                if let failure = follower?.failure {
                    connected.resolve(.failure(AnalogRemoteError(.networkUnavailable, failure.message)))
                }
                connected.resolve(.failure(AnalogRemoteError(.closed, "the controller stopped before the receiver answered")))
            }
        }
        thread.name = "RobotController"
        thread.stackSize = 512 * 1024
        thread.start()
    }
}
