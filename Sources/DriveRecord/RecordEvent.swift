/// One thing that happened, at a time since the recording's start (Protocol.md §10.3).
package struct RecordEntry: Equatable, Sendable {
    /// Microseconds since t = 0 (the header's `start`); never smaller than the previous entry's.
    package var micros: Int64
    package var event: RecordEvent

    package init(micros: Int64, event: RecordEvent) {
        self.micros = micros
        self.event = event
    }

    /// Seconds since t = 0.
    package var seconds: Double { Double(micros) / 1_000_000 }
}

/// The events of a recording. A controller writes `state`, `robot`, `sensors`, `link` and `end`; a black box
/// writes `state`, `owner`, `failsafe`, `resumed`, `teacher`, `board`, `board-link` and `mark`.
package enum RecordEvent: Equatable, Sendable {
    /// A state sent (controller) or applied (receiver): tilt in radians, the buttons' bits
    /// (Protocol.md §2).
    case state(angle: Float, buttons: UInt32)
    /// The robot's report changed (Protocol.md §7.9): its state name (`driving`, `failsafe`,
    /// `owned`, `teacher-stop`, …) and the detail (a failsafe's cause, the owner, a reason).
    case robot(state: String, detail: String)
    /// The link as the controller measured it: the latest round-trip time and the loss over the
    /// recent pings (0…1); nil = not known yet.
    case link(roundTripMillis: Double?, loss: Double?)
    /// What the robot sensed, as its receiver reported it (Protocol.md §7.9.1), on each change:
    /// sensors 1–4 and the switch (0…255, raw), temperature (°C) and humidity (%RH).
    case sensors(SensorValues)
    /// Who owns the robot now (display name or address); nil = nobody.
    case owner(String?)
    /// The failsafe stopped the motors: `silence`, `board-link`, `released`, …
    case failsafe(cause: String)
    /// A resting state lifted the failsafe.
    case resumed
    /// A teacher's stop-all was taken (true) or released (false).
    case teacher(stopped: Bool)
    /// Values the receiver handed to the board: (address, value) pairs in address order.
    case board([BoardValue])
    /// The board link went down (false) or came back (true); the text says what happened.
    case boardLink(up: Bool, text: String)
    /// A note in the timeline: why a black box was written (`failsafe`, `SIGUSR1`, `exit`).
    case mark(String)
    /// The controller stopped, and why; the last entry of a recording that was not cut short.
    case end(reason: String)

    /// The `e` member.
    package var name: String {
        switch self {
        case .state: "state"
        case .robot: "robot"
        case .link: "link"
        case .sensors: "sensors"
        case .owner: "owner"
        case .failsafe: "failsafe"
        case .resumed: "resumed"
        case .teacher: "teacher"
        case .board: "board"
        case .boardLink: "board-link"
        case .mark: "mark"
        case .end: "end"
        }
    }
}

/// The robot's sensor block in a recording (the board's raw values).
package struct SensorValues: Equatable, Sendable {
    package var sensors: [UInt8]
    package var switchValue: UInt8
    package var temperature: Int8
    package var humidity: UInt8

    package init(sensors: [UInt8], switchValue: UInt8, temperature: Int8, humidity: UInt8) {
        precondition(sensors.count == 4, "SensorValues: four sensors")
        self.sensors = sensors
        self.switchValue = switchValue
        self.temperature = temperature
        self.humidity = humidity
    }
}

/// One memory-map write: address and value.
package struct BoardValue: Equatable, Sendable {
    package var address: UInt8
    package var value: UInt8

    package init(address: UInt8, value: UInt8) {
        self.address = address
        self.value = value
    }
}
