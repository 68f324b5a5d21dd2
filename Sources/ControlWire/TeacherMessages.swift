import BoardProtocol
import RemoteWire

/// The teacher's dashboard on the wire (Protocol.md §7.10–§7.12): a signed `teacher` command
/// (watch, identify, kick, lock, unlock), the receiver's `teacher-reply`, and the `watch-report`
/// a watched receiver sends to the dashboard. All three are unreliable (sequence 0, version 1).
/// Stop and release are not here: they are the stop-all of §7.6, aimed at one receiver.

/// Dashboard → receiver, type 0x0C. Signed like a stop-all: the MAC is the first 16 bytes of
/// HMAC-SHA256 keyed with the teacher key over every payload byte before it.
package struct TeacherCommand: Hashable, Sendable {
    package enum Action: UInt8, Hashable, Sendable, CaseIterable {
        /// Send `watch-report`s to this source for the next ``TeacherCommand/watchLifetime``.
        case watch = 1
        /// Blink the board's LEDs and beep for 3 s; the motors are never touched.
        case identify = 2
        /// Free the robot: its driver is stopped and told why (the argument).
        case kick = 3
        /// Only the display name in the argument may drive, until unlocked.
        case lock = 4
        case unlock = 5

        package var name: String {
            switch self {
            case .watch: "watch"
            case .identify: "identify"
            case .kick: "kick"
            case .lock: "lock"
            case .unlock: "unlock"
            }
        }
    }

    /// A watch is good for this long after it was taken; a dashboard renews it every second.
    package static let watchLifetime: Duration = .seconds(3)

    package var action: Action
    /// Sender's wall clock, ms since 1970 (refused more than 30 s from the receiver's).
    package var unixMillis: UInt64
    /// Fresh per command: a receiver takes a nonce at most once.
    package var nonce: UInt64
    package var session: WireText
    /// The receiver's display name, or empty: every receiver of the session.
    package var target: WireText
    /// kick: why (shown to the driver); lock: the display name that may drive; else empty.
    package var argument: WireText
    package var mac: [UInt8]

    package init(action: Action, unixMillis: UInt64, nonce: UInt64, session: WireText, target: WireText = "",
                argument: WireText = "", mac: [UInt8] = .init(repeating: 0, count: 16)) {
        self.action = action; self.unixMillis = unixMillis; self.nonce = nonce; self.session = session
        self.target = target; self.argument = argument; self.mac = mac
    }

    /// The bytes the MAC covers.
    package var signedBytes: [UInt8] {
        var w = ByteWriter()
        w.u8(action.rawValue); w.u64(unixMillis); w.u64(nonce); w.str8(session); w.str8(target); w.str8(argument)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.raw(signedBytes)
        w.raw(mac.prefix(16))
        if mac.count < 16 { w.raw(repeatElement(0, count: 16 - mac.count)) }
    }

    static func decode(_ r: inout ByteReader, payload: ArraySlice<UInt8>) throws(ControlMessageError) -> TeacherCommand {
        let at = r.offset - payload.startIndex
        guard let action = Action(rawValue: try r.u8()) else { throw ControlMessageError(.badField, at: at, bytes: Array(payload)) }
        return TeacherCommand(action: action, unixMillis: try r.u64(), nonce: try r.u64(), session: try r.str8(),
                              target: try r.str8(), argument: try r.str8(), mac: Array(try r.take(16)))
    }
}

/// The teacher key's MAC, shared by stop-all (§7.6) and teacher commands (§7.10): its size on
/// the wire; computing and checking it is ControlPlane's (HMAC-SHA256 needs a crypto library).
package enum TeacherMAC {
    package static let size = 16
}

/// Receiver → dashboard, type 0x0D: what it made of one teacher command.
package struct TeacherReply: Hashable, Sendable {
    package enum Outcome: UInt8, Hashable, Sendable { case done = 1, refused = 2 }
    package var nonce: UInt64
    package var action: TeacherCommand.Action
    package var outcome: Outcome
    package var displayName: WireText
    /// Why it was refused; empty otherwise.
    package var text: WireText
    /// From a receiver with a teacher key: the first 16 bytes of HMAC-SHA256(MAC key,
    /// "AR teacher reply" ‖ every payload byte before it), so that a forged reply cannot show a
    /// command as done (Protocol.md §7.11). Empty: unsigned (a receiver without a key).
    package var mac: [UInt8]

    package init(nonce: UInt64, action: TeacherCommand.Action, outcome: Outcome, displayName: WireText, text: WireText = "",
                mac: [UInt8] = []) {
        self.nonce = nonce; self.action = action; self.outcome = outcome; self.displayName = displayName; self.text = text
        self.mac = mac
    }

    /// Says what the MAC is for (signing is ControlPlane's).
    package static let label = Array("AR teacher reply".utf8)

    /// The bytes the MAC covers (after its label).
    package var signedBytes: [UInt8] {
        var w = ByteWriter()
        w.u64(nonce); w.u8(action.rawValue); w.u8(outcome.rawValue); w.str8(displayName); w.str8(text)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.raw(signedBytes)
        if mac.count == TeacherMAC.size { w.raw(mac) }
    }

    static func decode(_ r: inout ByteReader, payload: ArraySlice<UInt8>) throws(ControlMessageError) -> TeacherReply {
        let nonce = try r.u64()
        let bad = { (at: Int) in ControlMessageError(.badField, at: at, bytes: Array(payload)) }
        let actionAt = r.offset - payload.startIndex
        guard let action = TeacherCommand.Action(rawValue: try r.u8()) else { throw bad(actionAt) }
        guard let outcome = Outcome(rawValue: try r.u8()) else { throw bad(actionAt + 1) }
        let name = try r.str8(), text = try r.str8()
        return TeacherReply(nonce: nonce, action: action, outcome: outcome, displayName: name, text: text,
                            mac: r.remaining == TeacherMAC.size ? Array(try r.take(TeacherMAC.size)) : [])
    }
}

/// Receiver → dashboard, type 0x0E: one row of the dashboard (at most 2 a second per watcher),
/// signed for the watch it answers (Protocol.md §7.12):
///
/// ```
/// +-----------------------------------------+------------------------------------------+
/// | serial … text (the row, as in the table) | MAC: HMAC-SHA256(MAC key, "AR watch      |
/// |                                         | report" ‖ watch nonce ‖ the row)[0..<16]  |
/// +-----------------------------------------+------------------------------------------+
/// ```
///
/// The watch nonce is not on the wire: it is the nonce of the `watch` command this watcher last
/// renewed with, which the dashboard knows. So a report verifies only at the dashboard it was
/// made for, and only while that watch lives. Decoding needs the MAC; checking it is the
/// dashboard's (``WatchReportGate``).
package struct WatchReport: Hashable, Sendable {
    /// 0xFFFF in a 16-bit figure: not measured (no driver, or a driver that does not answer pings).
    package static let unknown: UInt16 = 0xFFFF

    /// Counts reports to this watcher from 1 (the dashboard's loss and order).
    package var serial: UInt32
    /// Seconds since the receiver started.
    package var uptimeSeconds: UInt32
    /// The robot as a whole: §7.9's states as seen from no controller in particular (`driving`,
    /// `failsafe` with its cause, `teacher-stop`, `board-missing`, `free`).
    package var state: RobotReport.State
    /// Bit 0: a student lock is set; bit 1: identifying now. (Bit 2 on the wire, ``sensorsFlag``,
    /// says ``sensors`` follow; it comes from ``sensors`` alone and is never kept here.)
    package var flags: UInt8
    /// The receiver's robot id (``RobotID/value``, Protocol.md §6.2) shown on the dashboard; from a
    /// receiver that has none (an embedded one), its GameKit peer id, wider than 40 bits.
    package var robotID: UInt64
    /// Round-trip time to the driver over the last 5 s, ms: mean and max.
    package var rttMeanMillis: UInt16
    package var rttMaxMillis: UInt16
    /// Pings to the driver without a pong over the last 5 s, per mille.
    package var lossPerMille: UInt16
    /// State packets that reached the receiver per second (the last report interval).
    package var statesPerSecond: UInt16
    /// Failsafe trips since the receiver started.
    package var failsafes: UInt32
    /// The receiver's display name (its instance name in the session).
    package var name: WireText
    /// Who drives (display name, or ADDRESS:PORT for a plain sender); empty: nobody.
    package var driver: WireText
    /// The display name the robot is locked to; empty: not locked.
    package var lockedTo: WireText
    /// As in §7.9 (profile and firmware, or the `--board` spec).
    package var board: WireText
    /// How the board is reached: `serial`, `midi`, `sim`, `memory`.
    package var transport: WireText
    /// The receiver's software version.
    package var version: WireText
    /// The sensor block the receiver last read from its board (§7.9.1's seven bytes, after the
    /// text and under the MAC); nil: none read (sensors off, a firmware without the block, no
    /// board). Encoded with ``sensorsFlag`` set: a dashboard older than the flag refuses such a
    /// report, so a receiver that reads no sensors sends exactly the old layout.
    package var sensors: SensorBlock?
    /// The first 16 bytes of HMAC-SHA256(MAC key, ``label`` ‖ watch nonce ‖ the row's bytes);
    /// zeros until ``sign(key:watchNonce:)``.
    package var mac: [UInt8]

    package static let lockedFlag: UInt8 = 1
    package static let identifyingFlag: UInt8 = 2
    package static let sensorsFlag: UInt8 = 4

    package init(serial: UInt32, uptimeSeconds: UInt32, state: RobotReport.State, flags: UInt8 = 0, robotID: UInt64,
                rttMeanMillis: UInt16 = unknown, rttMaxMillis: UInt16 = unknown, lossPerMille: UInt16 = unknown,
                statesPerSecond: UInt16 = 0, failsafes: UInt32 = 0, name: WireText = "", driver: WireText = "", lockedTo: WireText = "",
                board: WireText = "", transport: WireText = "", version: WireText = "", sensors: SensorBlock? = nil,
                mac: [UInt8] = .init(repeating: 0, count: TeacherMAC.size)) {
        self.serial = serial; self.uptimeSeconds = uptimeSeconds; self.state = state; self.flags = flags; self.robotID = robotID
        self.rttMeanMillis = rttMeanMillis; self.rttMaxMillis = rttMaxMillis; self.lossPerMille = lossPerMille
        self.statesPerSecond = statesPerSecond; self.failsafes = failsafes; self.name = name; self.driver = driver; self.lockedTo = lockedTo
        self.board = board; self.transport = transport; self.version = version; self.mac = mac
        self.sensors = sensors
    }

    /// Says what the MAC is for: a watch report's MAC never verifies as another message's.
    package static let label = Array("AR watch report".utf8)

    /// The row's bytes: the payload before the MAC.
    package var signedBytes: [UInt8] {
        var w = ByteWriter()
        encodeRow(into: &w)
        return w.bytes
    }

    /// What the MAC covers: ``label`` ‖ watch nonce ‖ the row's bytes.
    package static func macInput(_ row: ArraySlice<UInt8>, watchNonce: UInt64) -> [UInt8] {
        var w = ByteWriter()
        w.raw(label); w.u64(watchNonce); w.raw(row)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        encodeRow(into: &w)
        w.raw(mac.prefix(TeacherMAC.size))
        if mac.count < TeacherMAC.size { w.raw(repeatElement(0, count: TeacherMAC.size - mac.count)) }
    }

    func encodeRow(into w: inout ByteWriter) {
        w.u32(serial); w.u32(uptimeSeconds); w.u8(state.code)
        if case .failsafe(let cause) = state { w.u8(cause.rawValue) } else { w.u8(0) }
        w.u8(flags & ~Self.sensorsFlag | (sensors == nil ? 0 : Self.sensorsFlag)); w.u64(robotID); w.u16(rttMeanMillis); w.u16(rttMaxMillis); w.u16(lossPerMille)
        w.u16(statesPerSecond); w.u32(failsafes)
        w.str8(name); w.str8(driver); w.str8(lockedTo); w.str8(board); w.str8(transport); w.str8(version)
        if case .boardMissing(let why) = state { w.str8(why) } else { w.str8("") }
        if let b = sensors {
            w.raw(b.sensors); w.u8(b.switchValue); w.u8(UInt8(bitPattern: b.temperature)); w.u8(b.humidity)
        }
    }

    static func decode(_ r: inout ByteReader, payload: ArraySlice<UInt8>) throws(ControlMessageError) -> WatchReport {
        let serial = try r.u32(), uptime = try r.u32()
        let codeAt = r.offset - payload.startIndex
        let code = try r.u8(), detail = try r.u8(), flags = try r.u8()
        let robotID = try r.u64()
        let mean = try r.u16(), max = try r.u16(), loss = try r.u16(), rate = try r.u16(), failsafes = try r.u32()
        let name = try r.str8(), driver = try r.str8(), locked = try r.str8(), board = try r.str8(), transport = try r.str8(), version = try r.str8()
        let why = try r.str8()
        var sensors: SensorBlock?
        if flags & sensorsFlag != 0 {   // announced by the flag, so a report without it keeps the old layout
            let values = Array(try r.take(4))
            let switchValue = try r.u8(), temperature = Int8(bitPattern: try r.u8()), humidity = try r.u8()
            sensors = SensorBlock(sensors: values, switchValue: switchValue, temperature: temperature, humidity: humidity)
        }
        let mac = Array(try r.take(TeacherMAC.size))   // a report without its MAC is refused
        let bad = { (at: Int) in ControlMessageError(.badField, at: at, bytes: Array(payload)) }
        let state: RobotReport.State
        switch code {
        case 1: state = .driving
        case 2:
            guard let cause = RobotReport.Cause(rawValue: detail) else { throw bad(codeAt + 1) }
            state = .failsafe(cause)
        case 5: state = .teacherStop
        case 6: state = .boardMissing(why: why)
        case 7: state = .free
        default: throw bad(codeAt)   // owned and refused are one controller's view, never a robot's
        }
        guard flags & ~(lockedFlag | identifyingFlag | sensorsFlag) == 0 else { throw bad(codeAt + 2) }
        return WatchReport(serial: serial, uptimeSeconds: uptime, state: state, flags: flags & ~sensorsFlag, robotID: robotID,
                           rttMeanMillis: mean, rttMaxMillis: max, lossPerMille: loss, statesPerSecond: rate,
                           failsafes: failsafes, name: name, driver: driver, lockedTo: locked, board: board, transport: transport,
                           version: version, sensors: sensors, mac: mac)
    }
}
