import BoardLink
import BoardProtocol
import Console
import SystemIO

/// Opens the board named by `--board` for the receive loop: the board link's `BoardConnection`
/// (serial, USB-MIDI, MIDI over a tty, or the in-process simulated board), with its events
/// forwarded to the loop's inbox. With `traceBoard` every change the receiver asks for is also
/// printed as `map <hex>` (the same line `board-sim --trace` prints).
public enum BoardSinks {
    /// The board link's profile for a mapping: the kit profile with the mapping's motor addresses,
    /// so the link's own safe state (written first after every open) stops the right motors.
    public static func profile(for mapping: Mapping) -> MemoryMapProfile {
        var profile = MemoryMapProfile.kit
        profile.motorLeft = mapping.drive.left.address
        profile.motorRight = mapping.drive.right.address
        return profile
    }

    public static func open(spec: String, mapping: Mapping, events: BoardEventInbox,
                            traceBoard: Bool) throws(UserFacingError) -> any BoardSink {
        let parsed: BoardSpec
        do {
            parsed = try BoardSpec(spec)
        } catch {
            throw UserFacingError(error.description, status: .usage)
        }
        let profile = profile(for: mapping)
        if let problem = profile.problem {
            throw UserFacingError("the mapping does not fit the board: \(problem)", status: .badConfiguration)
        }
        let connection: BoardConnection
        do {
            connection = try BoardConnection(spec: parsed, profile: profile) { event in
                switch event {
                case .connected(let device): events.post(.connected(device: device))
                case .disconnected(let device, let reason): events.post(.disconnected(device: device, reason: reason))
                case .reconnected(let device): events.post(.reconnected(device: device))
                }
            }
        } catch {
            throw UserFacingError(error.description, status: error.isDeviceUnavailable ? .deviceUnavailable : .failure)
        }
        guard traceBoard else { return connection }
        return TracingBoardSink(inner: connection, size: profile.size, safeState: profile.safeState) { line in
            StandardOutput.write(line + "\n")
        }
    }
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
}
