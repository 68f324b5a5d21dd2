/// Plays a ``Script``: each step's state at its time since ``start(now:)``, then `.end`.
package final class ScriptSource: InputSource {
    package let name: String
    package let script: Script
    private var origin: ContinuousClock.Instant?
    private var index = 0

    package init(script: Script, name: String) {
        self.script = script
        self.name = name
    }

    package var descriptor: Int32? { nil }

    package var nextDeadline: ContinuousClock.Instant? {
        guard let origin else { return nil }
        return index < script.steps.count ? origin + script.steps[index].at : nil
    }

    package func start(now: ContinuousClock.Instant) -> [InputEvent] {
        origin = now
        return deadlinePassed(now: now)
    }

    /// Every step that is due (a late wake-up applies them in order; the schedule sends the last).
    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        guard let origin, index < script.steps.count else { return [] }
        var events: [InputEvent] = []
        while index < script.steps.count, origin + script.steps[index].at <= now {
            events.append(.state(script.steps[index].state))
            index += 1
        }
        if index == script.steps.count { events.append(.end(.scriptFinished)) }
        return events
    }
}
