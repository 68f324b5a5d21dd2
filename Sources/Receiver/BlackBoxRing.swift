import DriveRecord

/// The black box's memory: the entries of the last ``window``, in a ring of fixed ``capacity``
/// allocated once. Appending drops what is older than the window and, past the capacity, the
/// oldest entry, so memory stays flat however long the receiver runs and whatever arrives.
/// A value with time passed in (entries carry it); the receiver owns one.
package struct BlackBoxRing: Sendable {
    package let window: Duration
    package let capacity: Int
    private var storage: [RecordEntry]
    /// Index of the oldest entry.
    private var head = 0
    package private(set) var count = 0
    private let windowMicros: Int64

    /// Entries kept per second of window, at most (a receiver at 100 Hz writes about 200: a
    /// state and a board write per packet that changes anything).
    package static let entriesPerSecond = 500

    package init(window: Duration, capacity: Int? = nil) {
        self.window = window
        let seconds = max(1, Int(window.components.seconds))
        self.capacity = max(64, capacity ?? seconds * Self.entriesPerSecond)
        windowMicros = window.components.seconds * 1_000_000 + window.components.attoseconds / 1_000_000_000_000
        storage = []
        storage.reserveCapacity(self.capacity)
    }

    package mutating func append(_ entry: RecordEntry) {
        while count > 0, storage[head].micros < entry.micros - windowMicros { dropOldest() }
        if count == capacity { dropOldest() }
        let slot = (head + count) % capacity
        if slot == storage.count { storage.append(entry) } else { storage[slot] = entry }
        count += 1
    }

    private mutating func dropOldest() {
        head = (head + 1) % capacity
        count -= 1
    }

    /// The entries, oldest first.
    package var entries: [RecordEntry] {
        (0..<count).map { storage[(head + $0) % capacity] }
    }

    /// The slots allocated (never more than ``capacity``).
    package var allocated: Int { storage.count }
}
