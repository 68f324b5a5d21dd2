import DriveRecord

extension Harness {
    /// Any bytes as a recording file (Protocol.md §10): either refused with a line number inside
    /// the file, or read into entries whose times never decrease and whose states are in the
    /// wire's limits; what was read writes out and reads back to the same text (a second pass
    /// changes nothing: the writer's rounding is settled after the first).
    static func recording(_ bytes: [UInt8]) {
        let lines = bytes.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        do {
            let recording = try Recording.decode(bytes)
            var last: Int64 = 0
            for entry in recording.entries {
                precondition(entry.micros >= last, "times decrease")
                last = entry.micros
                if case .state(let angle, _) = entry.event {
                    precondition(angle.isFinite && angle.magnitude <= RecordLine.maximumAngle)
                }
            }
            if let cut = recording.truncatedLine { precondition(cut >= 1 && cut <= lines) }
            let once = recording.encode()
            guard let again = try? Recording.decode(Array(once.utf8)) else { preconditionFailure("what was written does not read back") }
            precondition(again.truncatedLine == nil && again.entries.count == recording.entries.count && again.header == recording.header)
            precondition(again.encode() == once, "write → read → write is not stable")
        } catch {
            precondition(error.line >= 0 && error.line <= lines, "problem names line \(error.line) of \(lines)")
        }
    }
}
