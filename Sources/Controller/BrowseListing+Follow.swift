import Discovery

extension BrowseListing {
    /// One line for what a controller following the session would do (`browse --follow`), e.g.
    /// `follow "robot" 198.18.0.1:45678 every 20 ms (the receiver's rate)`.
    package static func line(for action: FollowReceiver.Action, requestedRateHz: Int? = nil) -> String {
        switch action {
        case .state(let name, let state):
            return "state \(quote(name)) \(state.rawValue)"
        case .sendTo(let address, let receiver):
            let cadence = SendCadence.plan(requestedRateHz: requestedRateHz, receiver: receiver.announcement.timing)
            let warning = cadence.honoursFailsafe ? "" : " — cannot honour its failsafe of \(receiver.announcement.timing.failsafeMilliseconds) ms"
            return "follow \(quote(receiver.name)) \(address) every \(milliseconds(cadence.period)) ms (\(cadence.boundBy.rawValue))\(warning)"
        case .stopSending(let name):
            return "stop \(quote(name)): gone, still looking"
        case .ambiguous(let receivers):
            return "ambiguous: " + receivers.map { "\(quote($0.name)) \($0.destination.map(String.init(describing:)) ?? "?")" }.joined(separator: ", ")
        case .ignored(let name, let reason):
            return "ignored \(quote(name)): \(reason)"
        case .discoveryPaused(let retry):
            return responderLost(retryIn: retry)
        case .discoveryResumed:
            return "responder-back"
        case .renamed(let name, let asked):
            return "renamed \(quote(name)): \(renameReason(asked: asked))"
        case .refresh(let instance):
            return "refresh \(quote(instance)): its address stopped answering, resolving it again"
        }
    }
}
