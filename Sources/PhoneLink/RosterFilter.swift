/// `web --roster`: which robot each student may see and drive on the phone page. A pure value:
/// the hub asks it for every list it sends and every join it takes.
///
/// Students are matched by display name ignoring case (the server keeps display names unique
/// ignoring case too); a robot by its receiver's display name or its id (DNS-SD instance name,
/// or `pN` for `--peer N`), ignoring case. A student not on the roster sees no robot and may
/// drive none.
package struct RosterFilter: Equatable, Sendable {
    /// Folded student name → the robot as the roster names it.
    private let robotOf: [String: String]

    /// `assignments`: student → robot, as the roster file lists them (a student once).
    package init(_ assignments: [(student: String, robot: String)]) {
        var map: [String: String] = [:]
        for a in assignments { map[Self.fold(a.student)] = a.robot }
        robotOf = map
    }

    /// The robot the roster gives `student`, as written there; nil for a student not on it.
    package func robot(for student: String) -> String? { robotOf[Self.fold(student)] }

    /// Whether `student` may see and drive `robot`.
    package func allows(_ student: String, _ robot: PhoneHub.Robot) -> Bool {
        guard let mine = self.robot(for: student).map(Self.fold) else { return false }
        return Self.fold(robot.name) == mine || Self.fold(robot.id) == mine
    }

    /// Why `student` may not drive `robot` (one line for the page), or nil when they may.
    package func refusal(_ student: String, _ robot: PhoneHub.Robot) -> String? {
        guard let mine = self.robot(for: student) else {
            return "\"\(student)\" is not on this class's roster: check how you spelled your name, or ask the teacher"
        }
        if allows(student, robot) { return nil }
        return "the roster gives \(student) \"\(mine)\", not \"\(robot.name)\": drive your own robot"
    }

    static func fold(_ s: String) -> String { s.lowercased() }
}
