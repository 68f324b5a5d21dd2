/// How many recordings a writer may start, per key (a driver) and per minute, and how many bytes
/// its directory may hold. A value with the time passed in: the caller does the I/O (rotation
/// with ``SafeDirectory/rotate(prefix:suffix:maximumBytes:keeping:)``).
///
/// Past the rate a new drive goes unrecorded (a page re-joining in a loop cannot fill the
/// directory with files); past the bytes the oldest recordings are removed, never the newest.
package struct RecordingQuota: Sendable {
    package var filesPerMinute: Int
    package var maximumBytes: Int
    /// Start times within the last minute, per key.
    private var starts: [String: [ContinuousClock.Instant]] = [:]

    package static let defaultFilesPerMinute = 6
    package static let defaultMegabytes = 500

    package init(filesPerMinute: Int = defaultFilesPerMinute, maximumBytes: Int = defaultMegabytes << 20) {
        self.filesPerMinute = filesPerMinute
        self.maximumBytes = maximumBytes
    }

    /// Whether `key` may start another recording at `now`; counted when it may.
    package mutating func admit(_ key: String, now: ContinuousClock.Instant) -> Bool {
        let since = now - .seconds(60)
        starts = starts.compactMapValues { times in
            let recent = times.filter { $0 > since }
            return recent.isEmpty ? nil : recent
        }
        let recent = starts[key] ?? []
        guard recent.count < filesPerMinute else { return false }
        starts[key] = recent + [now]
        return true
    }
}
