#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardProtocol
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
/// renames it into place and rotates the directory (mode 0600, ``SafeDirectory``). Exit waits for that queue.
package final class BlackBox {
    package let settings: BlackBoxSettings
    private let logger: Logger
    /// The directory, opened and checked once (``SafeDirectory``).
    private let directory: SafeDirectory
    private let origin: ContinuousClock.Instant
    private let startUnixMillis: UInt64
    private(set) var ring: BlackBoxRing
    /// Raised by SIGUSR1.
    let request: EventFlag
    private let registration: Int
    private let queue = DispatchQueue(label: "analog-remote.black-box")
    private var lastAutomatic: ContinuousClock.Instant?
    private var written = 0
    /// The sensor block last put in the ring (a `sensors` entry on each change).
    var lastSensors: SensorBlock?

    /// Creates the directory if needed (mode 0700), checks it (``SafeDirectory``) and starts
    /// listening for SIGUSR1.
    package init(settings: BlackBoxSettings, logger: Logger, now: ContinuousClock.Instant = .now) throws(SafeFileError) {
        self.settings = settings
        self.logger = logger
        directory = try SafeDirectory(settings.directory)
        guard access(settings.directory, W_OK) == 0 else {
            throw SafeFileError("\(settings.directory): cannot write in it: \(SystemError(call: "", errno: errno).reason)")
        }
        do {
            request = try EventFlag()
        } catch {
            throw SafeFileError("cannot set up SIGUSR1: \(error)")
        }
        origin = now
        startUnixMillis = WallClock.unixMillis()
        ring = BlackBoxRing(window: settings.window)
        let flag = request
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
        let (settings, logger, directory) = (settings, logger, directory)
        let job: @Sendable () -> Void = {
            let path = "\(settings.directory)/\(name)"
            do throws(SafeFileError) {
                try directory.replace(name, with: Array(recording.encode().utf8))
                logger.notice("black box written: \(path) (\(recording.entries.count) entries, \(reason))")
            } catch {
                logger.warning("black box: \(error)")
                return
            }
            Self.rotate(directory, settings, keeping: name, logger: logger)
        }
        if wait { queue.sync(execute: job) } else { queue.async(execute: job) }
    }

    /// Removes the oldest black box files until they fit ``BlackBoxSettings/maximumBytes``
    /// (never `keeping`, the one just written).
    static func rotate(_ directory: SafeDirectory, _ settings: BlackBoxSettings, keeping: String, logger: Logger) {
        for name in directory.rotate(prefix: BlackBoxSettings.prefix, suffix: BlackBoxSettings.suffix,
                                     maximumBytes: settings.maximumBytes, keeping: [keeping]) {
            logger.info("black box rotated out: \(name)")
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
