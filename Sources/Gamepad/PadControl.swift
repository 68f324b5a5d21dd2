/// One control a packet bit, the enable button or the stop button can be bound to: a button, a
/// trigger pressed past the threshold, or a stick pushed past the threshold one way.
///
/// Config spelling: a button name (`south`, `dpup`, …), `lefttrigger` / `righttrigger`, or a
/// stick axis with a direction: `lefty-` (left stick up: SDL's y grows downwards), `leftx+`
/// (left stick right).
package enum PadControl: Hashable, Sendable {
    case button(PadButton)
    /// A trigger past the threshold.
    case trigger(PadAxis)
    /// A stick axis past the threshold in one direction (`positive` = right or down).
    case stick(PadAxis, positive: Bool)

    package init?(name: String) {
        let lowered = name.lowercased()
        if let button = PadButton.allCases.first(where: { $0.name == lowered }) {
            self = .button(button)
            return
        }
        if let trigger = PadAxis.allCases.first(where: { $0.isTrigger && $0.name == lowered }) {
            self = .trigger(trigger)
            return
        }
        guard let sign = lowered.last, sign == "+" || sign == "-",
              let axis = PadAxis.allCases.first(where: { !$0.isTrigger && $0.name == lowered.dropLast() })
        else { return nil }
        self = .stick(axis, positive: sign == "+")
    }

    package var name: String {
        switch self {
        case .button(let b): b.name
        case .trigger(let a): a.name
        case .stick(let a, let positive): a.name + (positive ? "+" : "-")
        }
    }

    /// Every spelling accepted, for error messages.
    package static var allNames: [String] {
        PadButton.allCases.map(\.name) + ["lefttrigger", "righttrigger"]
            + ["leftx", "lefty", "rightx", "righty"].flatMap { [$0 + "+", $0 + "-"] }
    }

    /// Held in `snapshot`? Axes count when strictly past `threshold` (0.5 = "past half").
    package func isActive(in snapshot: PadSnapshot, threshold: Double) -> Bool {
        switch self {
        case .button(let b): snapshot.isHeld(b)
        case .trigger(let a): snapshot[a] > threshold
        case .stick(let a, let positive): positive ? snapshot[a] > threshold : snapshot[a] < -threshold
        }
    }
}
