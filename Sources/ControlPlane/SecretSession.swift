import ControlWire

/// The controller's side of `--accept secret` (`control --secret WORDS`), as a value type: answers
/// the receiver's challenge with a proof, recognises the connection in the first envelope from
/// the receiver that opens under the keys of that handshake, then seals every datagram it sends
/// and opens every one it receives (Protocol.md "Security").
package struct SecretSession: Sendable {
    package let secret: RobotSecret
    /// The sender instance in the envelope headers (the controller channel's).
    let instance: UInt32
    var receiverNonce: [UInt8]?
    var controllerNonce: [UInt8]?
    package private(set) var connectionID: UInt64 = 0
    var keys: SessionKeys?
    var window = ReplayWindow()
    var sent: UInt64 = 0

    package init(secret: RobotSecret, instance: UInt32) {
        self.secret = secret
        self.instance = instance
    }

    /// True once an envelope from the receiver opened: the receiver knows the secret too.
    package var established: Bool { keys != nil }

    /// The proof for a challenge (a new nonce of ours each time); nil once the connection is
    /// established. Keys change only when a handshake completes (``open(_:)``): a challenge can
    /// then only be forged or stale, and answering it must not cost the connection its keys.
    package mutating func answer(challenge nonce: [UInt8]) -> ControlMessage? {
        guard keys == nil else { return nil }
        let mine = SecretHandshake.nonce()
        receiverNonce = nonce
        controllerNonce = mine
        return .proof(nonce: mine, mac: SecretHandshake.proof(secret: secret, receiverNonce: nonce, controllerNonce: mine))
    }

    /// Opens an envelope from the receiver: the datagram it held, or nil (forged, replayed, not
    /// ours). Before the connection is known, an envelope that opens under the keys of our
    /// handshake and its connection id establishes it.
    package mutating func open(_ datagram: [UInt8]) -> [UInt8]? {
        guard let (header, _) = SealedEnvelope.peek(datagram) else { return nil }
        if let keys {
            guard header.connectionID == connectionID,
                  case .success(let e) = SealedEnvelope.open(datagram, key: keys.receiverToController, window: &window) else { return nil }
            return e.inner
        }
        guard let nr = receiverNonce, let nc = controllerNonce else { return nil }
        let candidate = SecretHandshake.keys(secret: secret, receiverNonce: nr, controllerNonce: nc, connectionID: header.connectionID)
        var fresh = ReplayWindow()
        guard case .success(let e) = SealedEnvelope.open(datagram, key: candidate.receiverToController, window: &fresh) else { return nil }
        keys = candidate
        window = fresh
        connectionID = header.connectionID
        return e.inner
    }

    /// Seals a datagram for the receiver; nil before the connection is established.
    package mutating func seal(_ datagram: [UInt8]) -> [UInt8]? {
        guard let keys, datagram.count <= SealedEnvelope.maxInner else { return nil }
        sent += 1
        return SealedEnvelope.seal(datagram, connectionID: connectionID, instance: instance, counter: sent,
                                   key: keys.controllerToReceiver)
    }
}
