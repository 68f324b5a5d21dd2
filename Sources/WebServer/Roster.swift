import ConfigFile
import Foundation
import PhoneLink
import TOMLKit

/// `web --roster FILE`: which student drives which robot, so the dashboard can show who is
/// missing. A `.toml` file holds a `[roster]` table (`Ann = "robot 1"`); anything else is read
/// as CSV, one `student,robot` per line (a `student,robot` header line and `#` comments are
/// skipped). A student appears once; a robot may have several students (they take turns).
struct Roster: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var student: String
        var robot: String
    }

    var entries: [Entry]

    /// What the phone server enforces: each student sees and drives only their robot.
    var filter: RosterFilter { RosterFilter(entries.map { ($0.student, $0.robot) }) }

    /// The students of `robot` (by its display name), in file order.
    func students(of robot: String) -> [String] { entries.filter { $0.robot == robot }.map(\.student) }

    /// Where the roster first names each robot (lower-cased name → position): the dashboard
    /// shows the roster's robots in this order, then the others.
    var robotOrder: [String: Int] {
        var order: [String: Int] = [:]
        for e in entries where order[e.robot.lowercased()] == nil { order[e.robot.lowercased()] = order.count }
        return order
    }

    static func load(_ path: String) throws(RosterError) -> Roster {
        let text: String
        do {
            text = try ConfigFileReader.read(path)
        } catch {
            throw RosterError(file: path, problem: error.problem(what: "the roster", allowedText: "a UTF-8 CSV or TOML file"))
        }
        return path.lowercased().hasSuffix(".toml") ? try toml(text, file: path) : try csv(text, file: path)
    }

    static func csv(_ text: String, file: String) throws(RosterError) -> Roster {
        var entries: [Entry] = []
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else {
                throw RosterError(file: file, problem: "line \(i + 1): expected `student,robot`, got \"\(line)\"")
            }
            if entries.isEmpty, fields[0].lowercased() == "student", fields[1].lowercased() == "robot" { continue }
            entries.append(Entry(student: fields[0], robot: fields[1]))
        }
        return try checked(entries, file: file)
    }

    static func toml(_ text: String, file: String) throws(RosterError) -> Roster {
        let root: TOMLTable
        do {
            root = try TOMLDocument.parse(text, file: file)
        } catch {
            throw RosterError(file: file, problem: error.problem)
        }
        guard let table = root["roster"]?.table else {
            throw RosterError(file: file, problem: "no [roster] table: write one line per student, e.g. Ann = \"robot 1\"")
        }
        var entries: [Entry] = []
        for key in table.keys.sorted() {
            guard let robot = table[key]?.string, !robot.isEmpty else {
                throw RosterError(file: file, problem: "roster.\(key): the robot must be a name in quotes, e.g. \"robot 1\"")
            }
            entries.append(Entry(student: key, robot: robot))
        }
        return try checked(entries, file: file)
    }

    static func checked(_ entries: [Entry], file: String) throws(RosterError) -> Roster {
        var seen = Set<String>()
        for e in entries where !seen.insert(e.student).inserted {
            throw RosterError(file: file, problem: "\(e.student) appears twice: give each student one robot")
        }
        guard !entries.isEmpty else { throw RosterError(file: file, problem: "no students in it") }
        return Roster(entries: entries)
    }
}

struct RosterError: Error, Equatable, CustomStringConvertible {
    let file: String
    let problem: String
    var description: String { "--roster \(file): \(problem)" }
}
