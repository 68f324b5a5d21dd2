import Console
import Controller
import DriveRecord
import Logging
import SystemIO

/// `web --record-dir DIR`: each phone's drive recorded like `control --record` does.
extension PhoneController {
    /// `phone-NAME-2026-11-25T16-40-00.123Z` (`.jsonl` follows): the driver's name (letters and
    /// digits) and when the drive started, so every driver and every drive has a file of its own
    /// (a name already taken gets `-2`, `-3`…: ``SafeDirectory/createUnique(stem:suffix:mode:)``).
    package static func recordingStem(driver: String) -> String {
        var name = ""
        for c in driver.unicodeScalars {
            let keep = ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
            if keep { name.unicodeScalars.append(c) } else if !name.hasSuffix("-") { name += "-" }
        }
        let stamp = String(RecordTime.iso8601(unixMillis: WallClock.unixMillis()).map { $0 == ":" ? "-" : $0 })
        return "phone-\(name.prefix(40))-\(stamp)"
    }

    /// The recorder for a phone's loop, or nil (none asked for, or the file cannot be made:
    /// said in the log, and the phone drives unrecorded).
    static func recorder(_ options: Options, session: ControlSession, peer: Destination.Peer?, logger: Logger) -> DriveRecorder? {
        guard let file = options.recordings?.start(driver: options.displayName, logger: logger) else { return nil }
        return DriveRecorder(file: file, header: DriveRecorder.header(input: "phone \"\(options.displayName)\"",
                                                                     receiver: peer?.description ?? "",
                                                                     session: options.session, rate: options.rate),
                             session: session, logger: logger)
    }
}
