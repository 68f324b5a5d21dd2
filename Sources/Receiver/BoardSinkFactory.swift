import Console

/// Opens the board named by `--board SPEC`.
///
/// === ADAPTER POINT: BoardConnection (BoardLink, issue 3) plugs in here after the merge ===
/// 1. Add `extension BoardConnection: BoardSink {}`. Its `setDesired(_:)`,
///    `writeSafeState(timeout:)` and `close()` already have exactly these signatures.
/// 2. In ``open(spec:mapping:events:traceBoard:)``, replace the `guard spec == "sim"` body with:
///    ```
///    let parsed = try BoardSpec(…spec…)              // its parse API; error → UserFacingError(.badConfiguration)
///    return try BoardConnection(spec: parsed, profile: .kit, onEvent: { event in
///        switch event {
///        case .connected(let d): events.post(.connected(device: d))
///        case .disconnected(let d, let r): events.post(.disconnected(device: d, reason: r))
///        case .reconnected(let d): events.post(.reconnected(device: d))
///        }
///    })                                              // BoardLinkError → UserFacingError(.deviceUnavailable)
///    ```
///    Keep ``MemoryBoardSink`` for `sim --trace-board` only if tests should stay in-process.
/// 3. Drop the `events.post(.connected…)` below: BoardConnection reports its own events.
/// ==========================================================================================
///
/// Until then only `sim` exists, backed by ``MemoryBoardSink``. Its safe state is the
/// mapping's rest values: motors 0 and every bound output released.
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
