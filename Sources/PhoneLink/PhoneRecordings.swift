import Console
import Controller
import DriveRecord
import Logging
import Synchronization
import SystemIO

/// `web --record-dir DIR`: the directory (opened and checked once, ``SafeDirectory``) and its
/// caps (``RecordingQuota``): at most ``RecordingQuota/filesPerMinute`` new recordings per
/// driver per minute, and the oldest `phone-*.jsonl` files removed before a new one starts so
/// that together they stay under ``RecordingQuota/maximumBytes``.
package final class PhoneRecordings: Sendable {
    package let directory: SafeDirectory
    private let quota: Mutex<RecordingQuota>
    static let prefix = "phone-"
    static let suffix = ".jsonl"

    /// Opens (creating it, mode 0700) and checks `path`; throws one line naming the fix.
    package init(path: String, quota: RecordingQuota = .init()) throws(SafeFileError) {
        directory = try SafeDirectory(path)
        self.quota = Mutex(quota)
    }

    /// A new file for `driver`'s drive (mode 0600), or nil when the driver has started too many
    /// this minute or the file cannot be made (said in the log; the phone drives unrecorded).
    package func start(driver: String, logger: Logger, now: ContinuousClock.Instant = .now) -> LineFile? {
        let (admitted, limit) = quota.withLock { q in (q.admit(driver.lowercased(), now: now), q) }
        guard admitted else {
            logger.warning("--record-dir: \(driver) started more than \(limit.filesPerMinute) drives in a minute; this drive is not recorded")
            return nil
        }
        for name in directory.rotate(prefix: Self.prefix, suffix: Self.suffix, maximumBytes: limit.maximumBytes) {
            logger.info("--record-dir: rotated out \(name) (the directory holds at most \(limit.maximumBytes >> 20) MB of recordings)")
        }
        do {
            let (name, file) = try directory.createUnique(stem: PhoneController.recordingStem(driver: driver), suffix: Self.suffix)
            return LineFile(file, path: "\(directory.path)/\(name)")
        } catch {
            logger.warning("--record-dir: \(error); this drive is not recorded")
            return nil
        }
    }
}
