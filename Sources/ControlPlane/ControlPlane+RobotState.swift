import ControlWire

extension ControlPlane {
    /// The datagram that tells `source` what the robot does for it (Protocol.md §7.9): unreliable,
    /// under its channel's header (connection id, cumulative ack), and sealed like every other
    /// datagram to a source of the authenticated mode (§8.3).
    package mutating func robotState(_ report: RobotReport, to source: Source) -> Output {
        var out = Output()
        out.datagrams.append((source, peerTable.unreliable(.robotState(report), to: source)))
        seal(&out)
        return out
    }

    /// The datagram that tells `source` what the robot senses (Protocol.md §7.9,
    /// `robot-sensors`): unreliable and sealed like ``robotState(_:to:)``.
    package mutating func robotSensors(_ sensors: RobotSensors, to source: Source) -> Output {
        var out = Output()
        out.datagrams.append((source, peerTable.unreliable(.robotSensors(sensors), to: source)))
        seal(&out)
        return out
    }
}
