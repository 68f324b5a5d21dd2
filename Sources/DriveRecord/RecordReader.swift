/// Reads a recording line by line (Protocol.md §10.4): the header first, then entries whose
/// times never decrease. One line in, one entry (or nothing) out; the first bad line is a
/// ``RecordProblem`` naming it, and the reader must not be fed again after that.
package struct RecordReader: Sendable {
    /// Longer lines are refused (a board write, the longest entry, is under 2 KiB).
    package static let maximumLineLength = 64 * 1024

    package private(set) var header: RecordHeader?
    /// The line number of the last line read (1-based).
    package private(set) var lineNumber = 0
    private var lastMicros: Int64 = 0

    package init() {}

    /// Reads one line (without its newline). Returns the entry it holds, or nil for the header,
    /// a blank line or an event this version does not know.
    package mutating func read(_ line: some Collection<UInt8>) throws(RecordProblem) -> RecordEntry? {
        lineNumber += 1
        guard line.count <= Self.maximumLineLength else {
            throw RecordProblem(line: lineNumber, reason: "longer than \(Self.maximumLineLength / 1024) KiB: not a recording line")
        }
        guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { return nil }
        let json: RecordJSON
        switch RecordJSON.parse(line) {
        case .success(let j): json = j
        case .failure(let e):
            let rest = String(decoding: line.dropFirst(e.offset).prefix(9), as: UTF8.self).lowercased()
            let reason = ["nan", "infinity", "-infinity", "inf", "-inf"].contains { rest.hasPrefix($0) }
                ? "NaN and Infinity are not JSON numbers (a recording holds finite numbers only)" : e.reason
            throw RecordProblem(line: lineNumber, reason: "not JSON at byte \(e.offset + 1): \(reason)")
        }
        guard header != nil else {
            switch RecordHeader.decode(json) {
            case .success(let h): header = h; return nil
            case .failure(let e): throw RecordProblem(line: lineNumber, reason: e.reason)
            }
        }
        let entry: RecordEntry?
        switch RecordLine.decode(json) {
        case .success(let e): entry = e
        case .failure(let e): throw RecordProblem(line: lineNumber, reason: e.reason)
        }
        guard let entry else { return nil }
        guard entry.micros >= lastMicros else {
            throw RecordProblem(line: lineNumber, reason: "time \(RecordNumber.seconds(micros: entry.micros)) s is before the previous entry's \(RecordNumber.seconds(micros: lastMicros)) s (times must not decrease)")
        }
        lastMicros = entry.micros
        return entry
    }
}

/// Why a recording is refused: the line (1-based; 0 = the file as a whole) and what is wrong.
/// The caller adds the file name: `FILE:LINE: REASON`.
package struct RecordProblem: Error, Equatable, Sendable, CustomStringConvertible {
    package let line: Int
    package let reason: String

    package init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    package var description: String { line > 0 ? "line \(line): \(reason)" : reason }
}

/// A whole recording, read from its bytes.
package struct Recording: Equatable, Sendable {
    package var header: RecordHeader
    package var entries: [RecordEntry]
    /// The number of a last line that was cut short (no newline, not a whole entry: the writer
    /// stopped mid-line, a crash or a full disk) and was left out; nil when the file is whole.
    package var truncatedLine: Int?

    package init(header: RecordHeader, entries: [RecordEntry], truncatedLine: Int? = nil) {
        self.header = header
        self.entries = entries
        self.truncatedLine = truncatedLine
    }

    /// Reads every line. A bad line anywhere is a ``RecordProblem``, except a last line without
    /// its newline that does not read: that is a writer cut short, reported in ``truncatedLine``.
    package static func decode(_ bytes: [UInt8]) throws(RecordProblem) -> Recording {
        var reader = RecordReader()
        var entries: [RecordEntry] = []
        var start = 0
        var truncated: Int?
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A)
            let line = bytes[start..<(end ?? bytes.count)]
            if let end {
                if let e = try reader.read(line) { entries.append(e) }
                start = end + 1
            } else {
                do {
                    if let e = try reader.read(line) { entries.append(e) }
                } catch {
                    guard reader.header != nil else { throw error }
                    truncated = error.line
                }
                start = bytes.count
            }
        }
        guard let header = reader.header else {
            throw RecordProblem(line: 0, reason: "empty: no header line (is this an analog-remote recording?)")
        }
        return Recording(header: header, entries: entries, truncatedLine: truncated)
    }

    /// The whole recording as text: the header and one line per entry, each ending in a newline.
    package func encode() -> String {
        var out = header.encode() + "\n"
        for entry in entries { out += RecordLine.encode(entry) + "\n" }
        return out
    }

    /// Seconds from t = 0 to the last entry.
    package var duration: Double { entries.last?.seconds ?? 0 }
}

extension Recording {
    /// The largest recording file a reader takes (an hour of driving at 50 Hz is about 11 MB);
    /// a larger one is likely not a recording.
    package static let maximumFileSize = 64 << 20

    /// The warning for a last line cut short, e.g. `rec.jsonl:412: warning: …`; nil when whole.
    package func truncationWarning(file: String) -> String? {
        truncatedLine.map { "\(file):\($0): warning: the last line is cut short (the recorder stopped mid-line: a crash?); using lines up to \($0 - 1)" }
    }
}

extension RecordProblem {
    /// `FILE:LINE: REASON`, or `FILE: REASON` for the file as a whole.
    package func located(in file: String) -> String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
}
