#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import DriveRecord
import Logging
import SystemIO

/// `receive --black-box DIR`: where, how much and how long.
package struct BlackBoxSettings: Sendable, Equatable {
    package var directory: String
    /// How far back a black box file reaches.
    package var window: Duration = .seconds(BlackBoxSettings.defaultWindowSeconds)
    /// All black box files in the directory together; the oldest go first past it.
    package var maximumBytes: Int = BlackBoxSettings.defaultMegabytes << 20

    package init(directory: String) { self.directory = directory }

    package static let defaultWindowSeconds = 30
    package static let windowRange = 1...600
    package static let defaultMegabytes = 50
    package static let megabyteRange = 1...10_000
    /// Black boxes written on events (failsafe, teacher stop, board lost) come at most this
    /// often; SIGUSR1 and exit always write one.
    package static let spacing: Duration = .seconds(5)
    static let prefix = "black-box-"
    static let suffix = ".jsonl"
}

/// The receiver's flight recorder: the last ``BlackBoxSettings/window`` of what it took and did
/// in a ``BlackBoxRing`` (constant memory), written as a recording (Protocol.md §10, kind
/// `black-box`, so `analog-remote plot` reads it) when something goes wrong — a failsafe, a
/// teacher's stop, the board lost — on SIGUSR1, and on exit.
///
/// The receive loop only appends to the ring (no I/O, no encoding); a write copies the ring and
/// hands the copy to a queue of its own, which encodes it, writes it beside a temporary name,
/// renames it into place and rotates the directory. Exit waits for that queue.
package final class BlackBox {
    package let settings: BlackBoxSettings
    private let logger: Logger
    private let origin: ContinuousClock.Instant
    private let startUnixMillis: UInt64
    private(set) var ring: BlackBoxRing
    /// Raised by SIGUSR1.
    let request: EventFlag
    private let registration: Int
    private let queue = DispatchQueue(label: "analog-remote.black-box")
    private var lastAutomatic: ContinuousClock.Instant?
    private var written = 0
    /// The state last recorded as applied (the service records changes only).
    var lastApplied: (angle: Float, buttons: UInt32)?

    /// Creates the directory if needed and starts listening for SIGUSR1.
    package init(settings: BlackBoxSettings, logger: Logger, now: ContinuousClock.Instant = .now) throws(SystemError) {
        self.settings = settings
        self.logger = logger
        try DirectoryListing.ensure(settings.directory)
        guard access(settings.directory, W_OK) == 0 else { throw SystemError(call: "access", errno: errno, subject: settings.directory) }
        origin = now
        startUnixMillis = WallClock.unixMillis()
        ring = BlackBoxRing(window: settings.window)
        let flag = try EventFlag()
        request = flag
        registration = SignalHub.register([SIGUSR1]) { _ in flag.raise() }
    }

    deinit { SignalHub.unregister(registration) }

    package func append(_ event: RecordEvent, at now: ContinuousClock.Instant) {
        let (s, atto) = (now - origin).components
        ring.append(RecordEntry(micros: max(0, s * 1_000_000 + atto / 1_000_000_000_000), event: event))
    }

    /// SIGUSR1 arrived (the flag is cleared).
    func takeRequest() -> Bool { request.clear() }

    /// Writes the ring now, marked with `reason`. An automatic write (an event, not a request)
    /// within ``BlackBoxSettings/spacing`` of the last one is skipped: its entries are in the
    /// next file anyway. `wait` blocks until this and every earlier write is on disk (exit).
    package func write(_ reason: String, at now: ContinuousClock.Instant, automatic: Bool = false, wait: Bool = false) {
        if automatic {
            if let last = lastAutomatic, now - last < BlackBoxSettings.spacing { return }
            lastAutomatic = now
        }
        append(.mark(reason), at: now)
        written += 1
        let recording = Recording(header: RecordHeader(kind: .blackBox, startUnixMillis: startUnixMillis, input: "receive"),
                                  entries: ring.entries)
        let stamp = RecordTime.iso8601(unixMillis: WallClock.unixMillis()).replacingColons
        let name = "\(BlackBoxSettings.prefix)\(stamp)-\(written)-\(reason.slug)\(BlackBoxSettings.suffix)"
        let (settings, logger) = (settings, logger)
        let job: @Sendable () -> Void = {
            let path = "\(settings.directory)/\(name)"
            do throws(SystemError) {
                try LineFile.replace(path, with: recording.encode())
                logger.notice("black box written: \(path) (\(recording.entries.count) entries, \(reason))")
            } catch {
                logger.warning("black box: cannot write \(path): \(error.reason)")
                return
            }
            Self.rotate(settings, keeping: name, logger: logger)
        }
        if wait { queue.sync(execute: job) } else { queue.async(execute: job) }
    }

    /// Removes the oldest black box files until they fit ``BlackBoxSettings/maximumBytes``
    /// (never `keeping`, the one just written).
    static func rotate(_ settings: BlackBoxSettings, keeping: String, logger: Logger) {
        var files = DirectoryListing.files(in: settings.directory, prefix: BlackBoxSettings.prefix, suffix: BlackBoxSettings.suffix)
            .sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
        var total = files.reduce(0) { $0 + $1.size }
        while total > settings.maximumBytes, let oldest = files.first, oldest.name != keeping {
            files.removeFirst()
            if DirectoryListing.remove(oldest.name, in: settings.directory) {
                total -= oldest.size
                logger.info("black box rotated out: \(oldest.name)")
            }
        }
    }
}

extension String {
    /// `teacher stop` → `teacher-stop`: letters and digits, the rest one hyphen.
    var slug: String {
        var out = ""
        for c in lowercased().unicodeScalars {
            if ("a"..."z").contains(c) || ("0"..."9").contains(c) { out.unicodeScalars.append(c) }
            else if !out.hasSuffix("-") { out += "-" }
        }
        return out.isEmpty ? "mark" : out
    }

    var replacingColons: String { String(map { $0 == ":" ? "-" : $0 }) }
}
