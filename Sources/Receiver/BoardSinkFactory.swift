import BoardLink
import BoardProtocol
import Console
import Synchronization
import SystemIO

/// Opens the board named by `--board` for the receive loop: the board link's `BoardConnection`
/// (serial, USB-MIDI, MIDI over a tty, or the in-process simulated board), with its events
/// forwarded to the loop's inbox. With `traceBoard` every change the receiver asks for is also
/// printed as `map <hex>` (the same line `board-sim --trace` prints).
///
/// At start the board is probed before anything else (one bounded `R`): the ``BoardPlan``
/// decides the profile and the mapping, and a board that lacks an address the mapping writes is
/// refused with one line (exit 2) after its own safe state. On every later connect the board
/// must be the same kind: a different one is refused the same way (``BoardEvent/refused(device:reason:)``).
package enum BoardSinks {
    /// How long start-up waits for the probe's answer (and the safe state after it).
    package static let probeTimeout: Duration = .seconds(3)

    /// The board link's profile for a mapping on the motors firmware (kept for callers that
    /// know their board runs it).
    package static func profile(for mapping: Mapping) -> MemoryMapProfile {
        mapping.linkProfile(base: mapping.profile.profile)
    }

    /// Opens a board driven with `mapping` as given (the bench): only checked against the board.
    package static func open(spec: String, mapping: Mapping, events: BoardEventInbox,
                            traceBoard: Bool, sensorRate: Double = SensorPoller.defaultRate,
                            writeBehindRead: Bool = false) throws(CommandFailure) -> any BoardSink {
        try open(spec: spec, plan: BoardPlan(fixed: mapping), events: events, traceBoard: traceBoard, sensorRate: sensorRate,
                 writeBehindRead: writeBehindRead)
    }

    /// `sensorRate`: reads of the sensor block a second (0 = off); the blocks read wake the
    /// receive loop through `events` (``SensorFeed``) and are the sink's ``BoardSink/sensors``.
    /// `writeBehindRead`: ``BoardOptions/writeBehindRead``.
    package static func open(spec: String, plan: BoardPlan, events: BoardEventInbox,
                            traceBoard: Bool, sensorRate: Double = SensorPoller.defaultRate,
                            writeBehindRead: Bool = false) throws(CommandFailure) -> any BoardSink {
        let parsed: BoardSpec
        do {
            parsed = try BoardSpec(spec)
        } catch {
            throw CommandFailure(error.description, kind: .badArgument)
        }
        let device = parsed.device
        // The first board decides; every later connect must resolve to the same.
        let pinned = Mutex<BoardResolution?>(nil)
        let fit: @Sendable (BoardIdentity) -> BoardFit = { identity in
            switch plan.resolve(identity, device: device) {
            case .failure(let refusal):
                return .refuse(refusal.reason, safeState: identity.profile?.profile)
            case .success(let resolution):
                return pinned.withLock { first -> BoardFit in
                    guard let first else {
                        first = resolution
                        return .use(resolution.profile)
                    }
                    guard first.mapping == resolution.mapping, first.kind == resolution.kind else {
                        return .refuse("\(device): this board runs the \(identity.summary), but the receiver started on the "
                                       + "\(first.identity.summary) and drives its \(first.kind.rawValue) mapping; "
                                       + "restart the receiver to drive this board", safeState: identity.profile?.profile)
                    }
                    return .use(first.profile)
                }
            }
        }
        let initial = plan.decidedProfile?.profile ?? .motors
        let connection: BoardConnection
        let feed = SensorFeed { events.wake() }
        var options = BoardOptions()
        options.sensorRate = sensorRate
        options.writeBehindRead = writeBehindRead
        do {
            connection = try BoardConnection(spec: parsed, profile: initial, options: options, fit: BoardFitter(fit),
                                             onSensors: SensorSink(feed.take)) { event in events.post(event) }
        } catch {
            throw CommandFailure(error.description, kind: error.isDeviceUnavailable ? .deviceUnavailable : .failed)
        }
        guard let known = connection.waitUntilIdentified(timeout: probeTimeout) else {
            let last = connection.snapshot.lastError.map { ": \($0)" } ?? ""
            connection.close()
            throw CommandFailure("\(device): the board did not answer the probe \"\(BoardIdentity.probe.text)\" within "
                                  + "\(probeTimeout)\(last); is it the programland kit with its firmware, and is --board right?",
                                 kind: .deviceUnavailable)
        }
        if let refusal = known.refusal {
            _ = connection.writeSafeState(timeout: .seconds(1))
            connection.close()
            throw CommandFailure(refusal, kind: .badConfiguration)
        }
        guard let resolution = pinned.withLock({ $0 }) else {
            connection.close()
            throw CommandFailure("\(device): the board was identified but no mapping was chosen", kind: .failed)
        }
        let sink = ConnectedBoard(connection: connection, resolution: resolution, feed: feed)
        guard traceBoard else { return sink }
        return TracingBoardSink(inner: sink, size: resolution.profile.size, safeState: resolution.profile.safeState) { line in
            StandardOutput.write(line + "\n")
        }
    }
}

/// The board link as the receive loop's sink, with what the start-up probe decided.
final class ConnectedBoard: BoardSink {
    let connection: BoardConnection
    private let _resolution: BoardResolution
    let feed: SensorFeed

    init(connection: BoardConnection, resolution: BoardResolution, feed: SensorFeed) {
        self.connection = connection
        _resolution = resolution
        self.feed = feed
    }

    func setDesired(_ values: [UInt8: UInt8]) { connection.setDesired(values) }
    func writeSafeState(timeout: Duration) -> Bool { connection.writeSafeState(timeout: timeout) }
    func close() { connection.close() }
    var linkBeat: Tick? { connection.lastBeat }
    var sensors: (block: SensorBlock, serial: UInt64)? { feed.latest }
    var resolution: BoardResolution? { resolved }
    private var resolved: BoardResolution { _resolution }
}

extension BoardConnection: BoardSink {}

/// Passes everything to `inner` and prints the map the receiver asked for after every change
/// (through a ``MemoryBoardSink`` shadow), for `--trace-board`.
final class TracingBoardSink: BoardSink {
    let inner: any BoardSink
    let shadow: MemoryBoardSink

    init(inner: any BoardSink, size: Int, safeState: [UInt8: UInt8], trace: @escaping @Sendable (String) -> Void) {
        self.inner = inner
        shadow = MemoryBoardSink(size: size, safeState: safeState, trace: trace)
    }

    func setDesired(_ values: [UInt8: UInt8]) {
        inner.setDesired(values)
        shadow.setDesired(values)
    }

    func writeSafeState(timeout: Duration) -> Bool {
        let confirmed = inner.writeSafeState(timeout: timeout)
        _ = shadow.writeSafeState(timeout: timeout)
        return confirmed
    }

    func close() { inner.close() }
    var resolution: BoardResolution? { inner.resolution }
    var linkBeat: Tick? { inner.linkBeat }
    var sensors: (block: SensorBlock, serial: UInt64)? { inner.sensors }
}
