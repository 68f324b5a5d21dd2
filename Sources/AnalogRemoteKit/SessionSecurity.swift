import ControlPlane
import SystemIO

extension RemoteSession {
    /// Whether a session's traffic is sealed and its peers must prove a shared secret
    /// (MultipeerConnectivity's `encryptionPreference`, without an "optional" middle: both ends
    /// must choose the same).
    public enum Security: Sendable {
        /// Plain datagrams, for games on a LAN you trust. Anyone on it can read every message,
        /// send a hello under any peer id and display name (and so appear as that peer), send
        /// messages as a peer it connected as, and, if it can spoof a peer's address, inject into
        /// that peer's link. A `.none` session refuses a `.secret` one (and the other way round)
        /// with ``AnalogRemoteError/Code/refused``.
        case none
        /// Only peers that prove they know `secret` connect, and every datagram after the
        /// handshake is encrypted and authenticated — `analog-remote receive --accept secret`'s
        /// challenge, proof and envelopes (Protocol.md §8.3, §7.13). Without the secret, someone
        /// on the LAN sees who talks to whom and how much, but cannot read, change, replay or
        /// inject a message, and cannot connect under any id or name. Everyone who holds the
        /// secret is trusted alike: peer ids and names are proven to belong to a holder of the
        /// secret, not to one person. Names found by DNS-SD (``RemoteSession/PeerState/available``)
        /// are not proven until connected.
        case secret(Secret)
    }

    /// The secret of a `.secret` session: 12 random bytes (96 bits), written as 12 words — the
    /// same words `analog-remote receive --accept secret` shows for a robot.
    ///
    /// Give every peer the same words: make them once with ``random()`` and show ``words``, or
    /// keep them in a file only their owner may read (``init(contentsOfFile:)``). The words are
    /// never logged and never part of ``description``.
    public struct Secret: Sendable, CustomStringConvertible {
        let value: RobotSecret

        init(_ value: RobotSecret) { self.value = value }

        /// Parses 12 words as a person may type them: case, separators (spaces, hyphens, commas)
        /// and cutting each word to its first four letters do not matter.
        ///
        /// - Throws: ``AnalogRemoteError`` `.invalidArgument` with the word that is wrong.
        public init(words: String) throws(AnalogRemoteError) {
            switch RobotSecret.parse(words) {
            case .success(let secret): value = secret
            case .failure(let error): throw AnalogRemoteError(.invalidArgument, "session secret: \(error)")
            }
        }

        /// Reads the words from a file that only its owner may read or write (not a symbolic
        /// link; the rule of `analog-remote receive --secret-file`).
        ///
        /// - Throws: ``AnalogRemoteError`` `.invalidArgument`: the file is missing, readable by
        ///   others, or does not hold 12 words.
        public init(contentsOfFile path: String) throws(AnalogRemoteError) {
            let text: String
            do throws(SecretFileError) {
                text = try SecretFile.read(path: path)
            } catch {
                throw AnalogRemoteError(.invalidArgument, "session secret file: \(error)")
            }
            try self.init(words: text)
        }

        /// A fresh secret from the system's cryptographically secure generator.
        public static func random() -> Secret { Secret(RobotSecret.random()) }

        /// The 12 words, space-separated: show them to the people who may join.
        public var words: String { value.words }

        public var description: String { "RemoteSession.Secret(12 words, not shown)" }
    }
}

extension RemoteSession.Security {
    var robotSecret: RobotSecret? {
        if case .secret(let secret) = self { secret.value } else { nil }
    }
}
