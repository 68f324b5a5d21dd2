import ControlWire
import RemoteWire

/// The receiver's side of the teacher's dashboard (Protocol.md §7.10–§7.12): teacher commands
/// are checked by ``TeacherGuard`` and answered with a `teacher-reply`; the service acts on the
/// ``ControlPlane/Effect/teacherCommand(_:_:)`` effect. The reports and the pings that measure
/// the driver's round trip are built here, so they are sealed like everything else under
/// `--accept secret`.
extension ControlPlane {
    mutating func teacher(_ command: TeacherCommand, from source: Source, unixMillis: UInt64, into out: inout Output) {
        let refusal = teacherGuard.refusal(command, nowUnixMillis: unixMillis)
        if let refusal {
            out.effects.append(.teacherRefused(source, command.action, refusal))
        } else {
            out.effects.append(.teacherCommand(source, command))
        }
        var reply = TeacherReply(nonce: command.nonce, action: command.action, outcome: refusal == nil ? .done : .refused,
                                 displayName: WireText(settings.displayName), text: WireText(refusal ?? ""))
        if let key = settings.teacherKey { reply.sign(key: key.macKey) }
        out.datagrams.append((source, peerTable.unreliable(.teacherReply(reply), to: source)))
    }

    /// One report to a watching dashboard, signed for the nonce of the watch it last renewed
    /// with (§7.12). Without a teacher key nothing is sent (such a receiver refuses every watch).
    package mutating func watchReport(_ report: WatchReport, watchNonce: UInt64, to source: Source) -> Output {
        var out = Output()
        guard let key = settings.teacherKey else { return out }
        var report = report
        report.sign(key: key.macKey, watchNonce: watchNonce)
        out.datagrams.append((source, peerTable.unreliable(.watchReport(report), to: source)))
        seal(&out)
        return out
    }

    /// A ping to the driver (answered by controllers that answer pings), to measure its round trip.
    package mutating func ping(id: UInt32, sentNanos: UInt64, to source: Source) -> Output {
        var out = Output()
        out.datagrams.append((source, peerTable.unreliable(.ping(id: id, sentNanos: sentNanos), to: source)))
        seal(&out)
        return out
    }

    /// Denies `source` reliably (the teacher kicked it, or the robot is locked to someone else):
    /// a controller that gets it stops and shows the text.
    package mutating func deny(_ deny: ControlMessage.Deny, to source: Source, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard peerTable.hasChannel(source) else { return out }
        // Echoes the nonce of the hello it accepted: a controller takes no deny without it (§7.4.1).
        var deny = deny
        if deny.echo == 0 { deny.echo = helloNonces[source] ?? 0 }
        peerTable.send(.deny(deny), to: source, now: now)
        admission.bye(from: source)
        out.datagrams = peerTable.poll(now: now).datagrams
        seal(&out)
        return out
    }
}
