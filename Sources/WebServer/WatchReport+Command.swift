import ControlWire
import RemoteWire

extension WatchReport {
    /// The row once a command the robot signed as done has taken effect, as the robot's next
    /// report will show it (Protocol.md §7.6, §7.10): the dashboard shows a stop at once instead
    /// of up to half a second later. The next report replaces it either way.
    func after(_ command: TeacherLink.Command) -> WatchReport {
        var r = self
        switch command {
        case .stop:
            r.state = .teacherStop
        case .release:
            guard case .teacherStop = state else { return self }
            // After a release the robot waits for its driver's resting state (§3.3).
            r.state = driver.isEmpty ? .free : .failsafe(.teacherRelease)
        case .identify:
            r.flags |= WatchReport.identifyingFlag
        case .kick:
            r.driver = ""
            if case .driving = state { r.state = .free }
            if case .failsafe = state { r.state = .free }
            r.rttMeanMillis = WatchReport.unknown
            r.rttMaxMillis = WatchReport.unknown
            r.lossPerMille = WatchReport.unknown
        case .lock(let name):
            r.lockedTo = WireText(name)
            r.flags |= WatchReport.lockedFlag
            if !driver.isEmpty, driver.text.lowercased() != name.lowercased() {
                r.driver = ""
                if case .driving = state { r.state = .free }
            }
        case .unlock:
            r.lockedTo = ""
            r.flags &= ~WatchReport.lockedFlag
        }
        return r
    }
}
