import Console
import ControlPlane
import Discovery
import Foundation
import Logging
import Receiver
import RemoteWire
import SystemIO

/// A receiver, as `analog-remote receive` is one, with your robot instead of the kit's board:
/// controllers find it, say hello and drive it under the same rules — one owner at a time,
/// pairing code or secret, the failsafe, a teacher's stop-all — and what they ask for arrives
/// in ``outputs``, mapped to motor speeds, lights and buzzer.
///
/// ```swift
/// let receiver = try await RobotReceiver(name: "wheelie", port: 27183)
/// for await output in receiver.outputs {
///     print(output.leftMotor, output.rightMotor)   // set your motors here
/// }
/// ```
///
/// The safe state comes as an output with ``RobotOutput/isSafeState`` set — apply it at once.
/// The receiver runs on a thread of its own until ``close()``, or SIGINT/SIGTERM when
/// `stopsOnSignals` is set; then the last output is the safe state and ``outputs`` ends.
public final class RobotReceiver: Sendable {
    /// Who may drive (the receiver's `--accept`).
    public enum Admission: Hashable, Sendable {
        /// The first controller owns the robot until it leaves or goes silent.
        case first
        /// Only a controller that gives this pairing code.
        case paired(code: String)
    }

    private let stopReceiving: @Sendable () -> Void
    private let broadcast: Broadcast<RobotOutput>
    private let sink: OutputSink
    private let finished: OneShot<Void>
    /// The UDP port controllers send to.
    public let port: UInt16

    /// Opens the port, announces the receiver in `session` (unless `advertise` is false), and
    /// starts receiving.
    ///
    /// - Parameters:
    ///   - name: how controllers and the teacher see the robot (its DNS-SD instance name).
    ///   - session: the session ID it is announced in.
    ///   - port: the UDP port; 0 picks a free one (read it from ``port``).
    ///   - admission: who may drive.
    ///   - failsafe: how long without a state before the robot is stopped (50 ms…5 s).
    ///   - advertise: announce by DNS-SD (needs an mDNS responder); off, controllers need the address.
    ///   - stopsOnSignals: SIGINT and SIGTERM stop the receiver (safe state first). Off, your program
    ///     keeps those signals and must call ``close()`` itself.
    ///   - logger: where the receiver says what it does — the lines `analog-remote receive` logs
    ///     (who drives, hellos refused, failsafe stops, the announcement); nil logs nothing.
    /// - Throws: ``AnalogRemoteError`` — `.invalidArgument`, `.networkUnavailable` (the port is
    ///   taken), `.discoveryUnavailable`.
    public init(name: String, session: String = "AnalogRemote", port: UInt16 = 27183, admission: Admission = .first,
                failsafe: Duration = FailsafeTimeout.standard.duration, advertise: Bool = true, stopsOnSignals: Bool = true,
                logger: Logger? = nil) async throws(AnalogRemoteError) {
        let ms = failsafe.components.seconds * 1000 + failsafe.components.attoseconds / 1_000_000_000_000_000
        guard FailsafeTimeout.receiverRange.contains(Int(ms)) else {
            let range = FailsafeTimeout.receiverRange
            throw AnalogRemoteError(.invalidArgument, "failsafe \(failsafe): give \(range.lowerBound)…\(range.upperBound) ms")
        }
        let sessionID = try Arguments.session(session, parameter: "session")
        var configuration = ReceiverConfiguration()
        configuration.port = port
        configuration.failsafe = FailsafeTimeout(milliseconds: Int(ms))
        configuration.boardName = "AnalogRemoteKit"
        configuration.advertise = advertise
        configuration.writesStandardOutput = false
        configuration.stopSignals = stopsOnSignals ? [SIGINT, SIGTERM] : []
        configuration.classroom.displayName = name
        configuration.classroom.session = session
        configuration.classroom.failsafe = configuration.failsafe
        switch admission {
        case .first: configuration.classroom.accept = .first
        case .paired(let code):
            configuration.classroom.accept = .paired
            configuration.classroom.pairingCode = code
        }
        let logger = logger ?? Logger.silent("AnalogRemoteKit.RobotReceiver")
        let advertising = advertise ? ReceiverAdvertising(
            options: AdvertisingOptions(session: sessionID, name: name,
                                        timing: TimingContract(failsafe: configuration.failsafe, rateHz: SendRate.standardHz)),
            logger: logger) : nil
        let broadcast = Broadcast<RobotOutput>()
        let sink = OutputSink(mapping: configuration.mapping, outputs: broadcast)
        let started = OneShot<Result<(port: UInt16, stop: @Sendable () -> Void), AnalogRemoteError>>()
        let finished = OneShot<Void>()
        // The receive loop is made, run and dropped on its own thread (it is not Sendable); what
        // crosses over is its port and its stop switch.
        let thread = Thread { [configuration] in
            defer {
                broadcast.finish()
                finished.resolve(())
            }
            let service: ReceiverService
            do {
                service = try ReceiverService(configuration: configuration, status: StatusLine(quiet: true), logger: logger,
                                              advertising: advertising) { events throws(CommandFailure) in
                    sink.attach(events)
                    return sink
                }
            } catch let error as DiscoveryError {
                started.resolve(.failure(AnalogRemoteError(.discoveryUnavailable, "\(error) (or pass advertise: false and give controllers the address)")))
                return
            } catch let error as CommandFailure {
                started.resolve(.failure(AnalogRemoteError(error.kind == .networkUnavailable ? .networkUnavailable : .receiverUnavailable,
                                                           error.message)))
                return
            } catch {
                started.resolve(.failure(AnalogRemoteError(.receiverUnavailable, "\(error)")))
                return
            }
            guard let port = service.port else {
                started.resolve(.failure(AnalogRemoteError(.networkUnavailable, "the receiver's socket has no port")))
                return
            }
            started.resolve(.success((port, service.stopper)))
            _ = try? service.run()
        }
        thread.name = "RobotReceiver"
        thread.start()
        switch await started.value {
        case .success(let ready):
            self.port = ready.port
            stopReceiving = ready.stop
            self.broadcast = broadcast
            self.sink = sink
            self.finished = finished
        case .failure(let error):
            await finished.value
            throw error
        }
    }

    /// Stops the receiver when the last reference goes (the safe state is the last output).
    deinit {
        stopReceiving()
    }

    /// What the robot should do, each change once, starting with the current output. Ends once
    /// the receiver stopped (after the safe state). Ending the iteration does not stop the receiver.
    public var outputs: AsyncStream<RobotOutput> { broadcast.subscribe() }

    /// Tells the controllers what your robot senses: call it whenever you read your sensors
    /// (any thread, never blocks). A reading that differs from the last goes to every connected
    /// controller at once (``RobotController/sensors``); the latest is repeated at least once a
    /// second while you keep calling.
    public func report(_ reading: SensorReading) {
        sink.report(reading.block)
    }

    /// Stops receiving: the safe state goes out as the last output, the announcement is
    /// withdrawn, the port closed. Returns once that is done. Idempotent.
    public func close() async {
        stopReceiving()
        await finished.value
    }
}

