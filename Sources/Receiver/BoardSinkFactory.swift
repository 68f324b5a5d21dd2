import Console

/// Opens the board named by `--board SPEC`.
///
/// ┌─────────────────────────────────────────────────────────────────────────────────────────┐
/// │ ADAPTER POINT — BoardConnection (BoardLink, issue 3) plugs in here after the merge:      │
/// │  1. add `extension BoardConnection: BoardSink {}` (its setDesired / writeSafeState /     │
/// │     close already have these exact signatures);                                          │
/// │  2. replace the body below with                                                          │
/// │       let spec = try BoardSpec(parsing: spec)          // map its error to UserFacingError│
/// │       return try BoardConnection(spec: spec, profile: .kit, onEvent: { event in          │
/// │           switch event {                                                                 │
/// │           case .connected(let d): events.post(.connected(device: d))                     │
/// │           case .disconnected(let d, let r): events.post(.disconnected(device: d, reason: r))│
/// │           case .reconnected(let d): events.post(.reconnected(device: d))                 │
/// │           }                                                                              │
/// │       })                                       // BoardLinkError → .deviceUnavailable    │
/// │     keeping `MemoryBoardSink` only if `--trace-board` with `sim` should stay in-process. │
/// └─────────────────────────────────────────────────────────────────────────────────────────┘
/// Until then only `sim` exists, backed by ``MemoryBoardSink`` (its safe state is the
/// mapping's rest values: motors 0, bound outputs released).
public enum BoardSinks {
    public static func open(spec: String, mapping: Mapping, events: BoardEventInbox,
                            traceBoard: Bool) throws(UserFacingError) -> any BoardSink {
        guard spec == "sim" else {
            throw UserFacingError(
                "board \(spec): this build only has the in-memory board `sim` (the serial/MIDI board link is not merged yet); use --board sim",
                status: .deviceUnavailable)
        }
        events.post(.connected(device: "sim"))
        let trace: (@Sendable (String) -> Void)? = traceBoard ? { @Sendable line in StandardOutput.write(line + "\n") } : nil
        return MemoryBoardSink(safeState: mapping.restValues, trace: trace)
    }
}
