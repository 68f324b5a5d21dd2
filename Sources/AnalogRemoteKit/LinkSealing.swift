import ControlPlane
import ControlWire

/// One link's handshake and envelopes in a `.secret` ``RemoteSession`` (Protocol.md §7.13,
/// §8.3): the peer that sent the hello proves the secret as `control --secret` does
/// (``SecretSession``); the peer that got it challenges and checks the proof as a receiver under
/// `--accept secret` does, chooses the connection id, and seals everything it sends from then on
/// under the receiver → controller key. A value: the link's owner feeds it and does the I/O.
enum LinkSealing: Sendable {
    /// Nothing asked or answered yet (a link a hello opened, before that hello is read).
    case none
    /// We sent the hello: we answer the challenge, and know the connection from the first
    /// envelope that opens under the keys of our proof.
    case connector(SecretSession)
    /// We got the hello and sent a challenge with this nonce; the hello's peer is not proven.
    case challenged(nonce: [UInt8], peer: RemoteSession.Peer)
    /// The proof was right: the connection we chose and its keys.
    case acceptor(Acceptor)

    struct Acceptor: Sendable {
        let connectionID: UInt64
        let keys: SessionKeys
        var window = ReplayWindow()
        var sent: UInt64 = 0
    }

    /// True once both sides hold the connection's keys: from then on nothing plain is taken.
    var established: Bool {
        switch self {
        case .connector(let s): s.established
        case .acceptor: true
        case .none, .challenged: false
        }
    }

    /// The datagram an envelope held, or nil: malformed, forged, replayed, another connection's,
    /// or no keys to open it with yet.
    mutating func open(_ envelope: [UInt8]) -> [UInt8]? {
        switch self {
        case .connector(var s):
            defer { self = .connector(s) }
            return s.open(envelope)
        case .acceptor(var a):
            guard let (header, _) = SealedEnvelope.peek(envelope), header.connectionID == a.connectionID,
                  case .success(let opened) = SealedEnvelope.open(envelope, key: a.keys.controllerToReceiver, window: &a.window)
            else { return nil }
            self = .acceptor(a)
            return opened.inner
        case .none, .challenged:
            return nil
        }
    }

    /// What goes on the wire for `datagram`: the datagram itself before the handshake completed,
    /// its envelope after; nil (drop it) when it is too large to seal.
    mutating func wire(_ datagram: [UInt8], instance: UInt32) -> [UInt8]? {
        guard established else { return datagram }
        guard datagram.count <= SealedEnvelope.maxInner else { return nil }
        switch self {
        case .connector(var s):
            defer { self = .connector(s) }
            return s.seal(datagram)
        case .acceptor(var a):
            a.sent += 1
            self = .acceptor(a)
            return SealedEnvelope.seal(datagram, connectionID: a.connectionID, instance: instance, counter: a.sent,
                                       key: a.keys.receiverToController)
        case .none, .challenged:
            return datagram
        }
    }
}
