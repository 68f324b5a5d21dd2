import Foundation
import RemoteWire
import SystemIO
import Synchronization

/// The lesson's log: every event the dashboard sees or causes (a robot's state or driver
/// changing, stop, release, identify, kick, lock), with its time and robot. Kept in memory (the
/// last ``capacity``) for the CSV download, and appended as JSON Lines to a file under
/// `--log-dir` when one is given (one file per server start).
final class TeacherLog: Sendable {
    struct Entry: Sendable {
        var unixMillis: UInt64
        var robot: String
        var event: String
        var detail: String
    }

    static let capacity = 10_000
    private let entries = Mutex<[Entry]>([])
    private let file: Mutex<FileHandle?>
    let path: String?

    /// `directory` nil: memory only. Throws one line when the directory cannot be used: it is
    /// made (mode 0700) and checked, and the file created new in it, mode 0600, never through a
    /// link (``SafeDirectory``).
    init(directory: String?) throws(SafeFileError) {
        guard let directory else { path = nil; file = Mutex(nil); return }
        let dir = try SafeDirectory(directory)
        let (name, fd) = try dir.createUnique(stem: "lesson-\(Self.stamp(Date()))", suffix: ".jsonl")
        // The handle takes the descriptor over: a copy, so that the Descriptor closing its own does no harm.
        let copy = dup(fd.rawValue)
        fd.close()
        guard copy >= 0 else { throw SafeFileError("\(dir.path)/\(name): cannot open it (errno \(errno))") }
        let handle = FileHandle(fileDescriptor: copy, closeOnDealloc: true)
        path = dir.path + "/" + name
        file = Mutex(handle)
    }

    /// Names and texts from the network or a page are kept as ``DisplayText`` shows them (no
    /// control character reaches the file, the CSV or a page); the CSV neutralises formulas.
    func record(robot: String, event: String, detail: String) {
        let robot = DisplayText.sanitised(robot), detail = DisplayText.sanitised(detail)
        let entry = Entry(unixMillis: UInt64(Date().timeIntervalSince1970 * 1000), robot: robot, event: event, detail: detail)
        entries.withLock {
            if $0.count >= Self.capacity { $0.removeFirst($0.count - Self.capacity + 1) }
            $0.append(entry)
        }
        guard let data = try? Self.encoder.encode(Line(time: Self.iso(entry.unixMillis), robot: robot, event: event, detail: detail))
        else { return }
        file.withLock { $0?.write(data + Data([0x0A])) }
    }

    /// One line of the JSON log (keys sorted: `detail`, `event`, `robot`, `time`).
    private struct Line: Encodable {
        var time: String
        var robot: String
        var event: String
        var detail: String
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }()

    /// time,robot,event,detail (``CSVText``: RFC 4180, a cell a spreadsheet would run as a
    /// formula neutralised; robot names and details come from the network and from students).
    func csv() -> String {
        let rows = entries.withLock { $0 }
        return CSVText.row(["time", "robot", "event", "detail"])
            + rows.map { CSVText.row([Self.iso($0.unixMillis), $0.robot, $0.event, $0.detail]) }.joined()
    }

    static func iso(_ millis: UInt64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyyMMdd-HHmmss"
        return f.string(from: date)
    }
}
