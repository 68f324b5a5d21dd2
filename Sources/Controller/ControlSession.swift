import Console
import ControlPlane
import ControlWire
import Logging
import RemoteWire
import SystemIO

/// The controller's half of the classroom control messages (Protocol.md §7.4–7.5, §7.8), riding
/// along with the send loop on the state socket:
///
/// - `hello` (display name, pairing code, session) over a ``ReliableChannel`` to every new
///   destination; `accept` → pings once a second (round-trip time and loss, ``LinkQuality``);
///   `deny` → the loop ends and the reason is printed;
/// - with a pairing code, states are held until the receiver accepts (a paired receiver would
///   only deny them), and a receiver that never answers ends the controller;
/// - without one, states flow from the start, so an older receiver that drops control messages
///   is driven as before (the hello just goes unanswered);
/// - game scores (data channel 1) show in the status line; the final one is logged.
package final class ControlSession: SendLoopCompanion {
    package struct Options: Sendable {
        package var displayName: String
        package var pairingCode: String?
        package var session: String
        /// `--secret WORDS`: prove the robot's secret and seal every datagram (states included).
        package var secret: RobotSecret?

        package init(displayName: String, pairingCode: String? = nil, session: String = "", secret: RobotSecret? = nil) {
            self.displayName = displayName
            self.pairingCode = pairingCode
            self.session = session
            self.secret = secret
        }
    }

    enum Phase: Equatable {
        /// No destination yet.
        case idle
        case waiting
        case accepted(name: WireText)
        /// The receiver never answered the hello (an older receiver).
        case unanswered
        case refused
    }

    let options: Options
    let logger: Logger
    let peerID = UInt64.random(in: 1...UInt64.max)
    private let epoch = ContinuousClock.now
    private(set) var phase = Phase.idle
    private var channel: ReliableChannel
    package private(set) var quality = LinkQuality()
    private var socket: UDPSocket?
    private var peer: SocketAddress?
    private var nextPing: ContinuousClock.Instant?
    private var score: GameScore?
    /// What the driver is told: the robot's state, answers, silence (DriverFeedback.swift).
    package internal(set) var feedback = DriverFeedback(target: "", now: .now)
    var toldSilence = false
    /// Any receiver answered at least once (kept when following a receiver to a new address).
    var everAnswered = false
    /// The sensor values last logged at the default level: a repeat or a new sample with the
    /// same values is logged at debug only, so a driver's log holds a line per change.
    var loggedSensors: [Int]?
    var buffer = [UInt8](repeating: 0, count: 2048)
    /// Under `--secret`: the handshake and the envelopes.
    private var sealed: SecretSession?
    /// The destinations, when they come from a session follower: a new address of the same
    /// receiver keeps the connection (``start(socket:peer:now:)``).
    package var destination: Destination?
    /// The receiver (DNS-SD instance) of the current peer, when known.
    private var receiver: String?
    private var incarnation: String?
    /// When the peer last sent anything that decoded (a pong, an ack, an accept).
    private var lastHeard: ContinuousClock.Instant?
    /// The nonce of the current hello: an accept, deny or challenge that does not echo it answers
    /// someone else's hello (one forged from our address) and is dropped unread (Protocol.md §7.4).
    private var helloNonce: UInt64 = 0

    package init(_ options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
        channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
    }

    package var descriptor: Int32? { socket?.descriptor.rawValue }

    package var nextDeadline: ContinuousClock.Instant? {
        let channelDue = channel.nextDeadline(now: .now)
        guard let nextPing else { return channelDue }
        return channelDue.map { min($0, nextPing) } ?? nextPing
    }

    package var allowsStates: Bool {
        if case .accepted = phase { return sealed?.established ?? true }
        return options.pairingCode == nil && options.secret == nil
    }

    /// Under `--secret`, every state goes out sealed (and none before the connection is known).
    package func wrapState(_ packet: [UInt8]) -> [UInt8]? {
        guard sealed != nil else { return packet }
        return sealed?.seal(packet)
    }

    package var statusParts: [String] {
        var parts: [String] = []
        switch phase {
        case .idle, .refused: break
        case .waiting: parts.append("hello…")
        case .unanswered: parts.append("no control messages (older receiver)")
        case .accepted(let name):
            var link = "\(name.isEmpty ? "accepted" : name)"
            if let rtt = quality.lastRoundTrip { link += " rtt \(Self.milliseconds(rtt)) ms" }
            if let loss = quality.lossRate { link += " loss \(Int((loss * 100).rounded()))%" }
            parts.append(link)
        }
        if let score { parts.append(Self.describe(score)) }
        // Last: on a narrow terminal the line is cut from the end, and the link matters more.
        if let sensors = feedback.sensors { parts.append(sensors.compact) }
        return parts
    }

    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        service(socket: socket, peer: peer, now: now, readable: true)
    }

    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction] {
        guard let socket, let peer else { return [] }
        var actions: [CompanionAction] = []
        // A socket new to us was not in the poll that said `readable`.
        var readable = readable
        if peer != self.peer || socket !== self.socket {
            start(socket: socket, peer: peer, now: now)
            readable = true
        }
        while readable, let (length, from) = receive(socket) {
            guard from == peer, length <= buffer.count, ControlHeader.looksLikeControl(buffer[..<length]) else { continue }
            var bytes = Array(buffer[..<length])
            if sealed != nil {
                // Under --secret: after the challenge, only what opens under the handshake's keys.
                if bytes[3] == ControlType.sealed.rawValue {
                    guard let inner = sealed?.open(bytes) else { continue }
                    bytes = inner
                } else if sealed?.established == true {
                    continue
                }
            }
            guard let datagram = try? ControlDatagram.decode(bytes) else { continue }
            // After the accept, a datagram without our connection id is not from our receiver.
            if channel.connectionID != 0, datagram.header.connectionID != channel.connectionID { continue }
            // An answer to a hello that is not ours never reaches the channel (where it would
            // take a sequence number that our receiver's answer needs).
            guard Self.answers(datagram, hello: helloNonce) else { continue }
            lastHeard = now
            heard(datagram, now: now)
            // The receiver measures its driver's round trip for the teacher's dashboard (§7.12).
            if datagram.header.type == .ping,
               case .ping(let id, let sent)? = try? ControlMessage.decode(type: .ping, payload: datagram.payload) {
                send(channel.unreliable(.pong(id: id, sentNanos: sent)))
            }
            if datagram.header.type == .pong,
               case .pong(let id, _)? = try? ControlMessage.decode(type: .pong, payload: datagram.payload) {
                quality.pongReceived(id: id, now: now)
            }
            for event in channel.receive(datagram, now: now) {
                guard case .delivered(let message) = event else { continue }
                if case .accept = message, datagram.header.connectionID != 0 {
                    // The receiver's connection id: every datagram from now on carries it.
                    channel.connectionID = datagram.header.connectionID
                }
                actions += handle(message, now: now)
            }
        }
        if case .accepted = phase, let due = nextPing, now >= due {
            let id = quality.pingSent(now: now)
            send(channel.unreliable(.ping(id: id, sentNanos: nanoseconds(now))))
            nextPing = now + .seconds(1)
        }
        watchSilence(now: now)
        let (datagrams, events) = channel.poll(now: now)
        for d in datagrams { send(d) }
        if events.contains(.peerUnreachable), phase == .waiting {
            if options.secret != nil {
                phase = .refused
                actions.append(.end(.refused("\(peer) never answered the hello: is it running --accept secret?")))
            } else if options.pairingCode != nil {
                phase = .refused
                actions.append(.end(.refused("\(peer) never answered the hello (an older receiver without pairing?): start without --pair")))
            } else {
                phase = .unanswered
                logger.notice("the receiver does not answer control messages (an older receiver?): driving without a name")
            }
        }
        return actions
    }

    /// How long the receiver has been silent on the current destination, once it has accepted
    /// this controller there (pings go once a second, so a live link answers every second);
    /// nil before that (an older receiver never answers).
    package func silence(now: ContinuousClock.Instant) -> Duration? {
        guard case .accepted = phase, let lastHeard else { return nil }
        return now - lastHeard
    }

    /// A new destination. Another address of the receiver that accepted this controller keeps
    /// the connection: the same channel (connection id, sequence numbers) goes on from the new
    /// socket, and a ping goes out at once so the receiver recognises the controller on its new
    /// address before the next state arrives (it keeps its owner, no failsafe). Anything else
    /// — including the same name restarted (a new `peer` id), which knows no connection — gets
    /// a fresh channel and link measurement, and a hello.
    private func start(socket: UDPSocket, peer: SocketAddress, now: ContinuousClock.Instant) {
        let current = destination?.current.flatMap { $0.address == peer ? $0 : nil }
        let newReceiver = current?.receiver
        let newIncarnation = current?.incarnation
        if case .accepted = phase, let receiver, receiver == newReceiver, incarnation == newIncarnation, let old = self.peer {
            self.socket = socket
            self.peer = peer
            lastHeard = now      // the new address gets its own grace
            let id = quality.pingSent(now: now)
            send(channel.unreliable(.ping(id: id, sentNanos: nanoseconds(now))))
            nextPing = now + .seconds(1)
            logger.notice("receiver \"\(receiver)\" moved from \(old) to \(peer): same connection")
            return
        }
        receiver = newReceiver
        incarnation = newIncarnation
        lastHeard = nil
        self.socket = socket
        self.peer = peer
        channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
        sealed = options.secret.map { SecretSession(secret: $0, instance: channel.connection) }
        quality = LinkQuality()
        nextPing = nil
        score = nil
        feedback.restart(target: "\(peer)", now: .now)
        toldSilence = false
        phase = .waiting
        helloNonce = ControlMessage.Hello.freshNonce()
        try? channel.send(.hello(.init(peerID: peerID, displayName: WireText(options.displayName),
                                       pairingCode: WireText(options.pairingCode ?? ""), session: WireText(options.session), nonce: helloNonce)))
    }

    private func handle(_ message: ControlMessage, now: ContinuousClock.Instant) -> [CompanionAction] {
        switch message {
        case .challenge(let nonce, _):
            guard sealed != nil else {
                phase = .refused
                return [.end(.refused("\(peer.map { "\($0)" } ?? "the receiver") needs the robot's secret: start the controller with --secret \"WORDS\" (the 12 words on the robot's screen)"))]
            }
            // Once established a challenge is never our receiver's: ignored, keys kept.
            if let proof = sealed?.answer(challenge: nonce) { try? channel.send(proof) }
            return []
        case .accept(let a):
            let first = phase != .accepted(name: a.displayName)
            phase = .accepted(name: a.displayName)
            if nextPing == nil { nextPing = now }
            if first {
                logger.notice("accepted by \(a.displayName.isEmpty ? "the receiver" : "\"\(a.displayName)\"") (failsafe \(a.failsafeMilliseconds) ms, \(a.rateHertz) Hz)")
            }
            return [.sendNow]
        case .deny(let d):
            phase = .refused
            let who = peer.map { "\($0)" } ?? "the receiver"
            if d.reason == .kicked || d.reason == .locked { return [.end(.refused("\(who): \(d.text)"))] }
            return [.end(.refused("\(who) refused this controller: \(d.text)"))]
        case .data(let channel, let bytes) where channel == GameScore.channel:
            guard let s = try? GameScore.decode(bytes) else { return [] }
            score = s
            if s.phase == .final { logger.notice("game over: \(Self.describe(s))") }
            return []
        case .bye:
            logger.notice("the receiver said bye")
            return []
        default:
            return []
        }
    }

    /// False for an accept, deny or challenge that does not echo `hello` (our hello's nonce).
    static func answers(_ datagram: ControlDatagram, hello: UInt64) -> Bool {
        let echo: UInt64
        switch datagram.header.type {
        case .accept, .deny, .challenge:
            switch try? ControlMessage.decode(type: datagram.header.type, payload: datagram.payload) {
            case .accept(let a)?: echo = a.echo
            case .deny(let d)?: echo = d.echo
            case .challenge(_, let e)?: echo = e
            default: return false
            }
        default:
            return true
        }
        return echo == hello
    }

    /// Says bye (so the receiver frees the robot at once) and waits up to 300 ms for its ack.
    package func finish(socket: UDPSocket?, peer: SocketAddress?) {
        guard case .accepted = phase, let socket = self.socket, peer == self.peer else { return }
        try? channel.send(.bye)
        let deadline = ContinuousClock.now + .milliseconds(300)
        while ContinuousClock.now < deadline {
            let now = ContinuousClock.now
            for d in channel.poll(now: now).datagrams { send(d) }
            if channel.backlog == 0 { return }
            let wake = min(deadline, channel.nextDeadline(now: now) ?? deadline)
            _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: max(.zero, wake - .now))
            while let (length, from) = try? socket.receive(into: &buffer) {
                guard from == self.peer, length <= buffer.count else { continue }
                var bytes = Array(buffer[..<length])
                if sealed != nil {
                    guard let inner = sealed?.open(bytes) else { continue }
                    bytes = inner
                }
                guard let datagram = try? ControlDatagram.decode(bytes),
                      channel.connectionID == 0 || datagram.header.connectionID == channel.connectionID else { continue }
                _ = channel.receive(datagram, now: .now)
            }
        }
    }

    /// Sends a control datagram, sealed under `--secret` once the connection is known.
    private func send(_ datagram: [UInt8]) {
        guard let socket, let peer else { return }
        var wire = datagram
        if sealed?.established == true {
            guard let s = sealed?.seal(datagram) else { return }
            wire = s
        }
        do {
            _ = try socket.send(wire, to: peer)
        } catch {
            sendFailed(error)   // ECONNREFUSED may surface on any call: do not lose it here
        }
    }

    /// `game 12 points · rank 3 of 32` (with the round when there are several).
    static func describe(_ s: GameScore) -> String {
        var text = "game \(s.points) point\(s.points == 1 ? "" : "s") · rank \(s.rank) of \(s.players)"
        if s.rounds > 1 { text += " · round \(s.round) of \(s.rounds)" }
        return text
    }

    static func milliseconds(_ d: Duration) -> String {
        let (s, atto) = d.components
        let tenths = s * 10_000 + atto / 100_000_000_000_000
        return tenths >= 1000 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }

    /// Ping timestamps: nanoseconds since this session began (only echoed back, never compared
    /// across hosts).
    func nanoseconds(_ t: ContinuousClock.Instant) -> UInt64 {
        let (s, atto) = (t - epoch).components
        return UInt64(max(0, s)) &* 1_000_000_000 &+ UInt64(max(0, atto / 1_000_000_000))
    }
}

extension ControlSession {
    /// The link as values, for a UI that is not the status line (the phone page of `analog-remote
    /// web`): where the hello stands, the receiver's name, round-trip time and loss.
    package struct Snapshot: Equatable, Sendable {
        package enum Phase: Equatable, Sendable {
            /// No destination yet.
            case idle
            /// The hello is out, no answer yet.
            case waiting
            /// The receiver accepted this controller (under the name it announced).
            case accepted(receiverName: String)
            /// The receiver never answered (an older receiver): states flow without a name.
            case unanswered
            case refused
        }

        package var phase: Phase
        package var roundTrip: Duration?
        /// 0…1 over the last pings.
        package var loss: Double?
    }

    package var snapshot: Snapshot {
        let p: Snapshot.Phase = switch phase {
        case .idle: .idle
        case .waiting: .waiting
        case .accepted(let name): .accepted(receiverName: name.text)
        case .unanswered: .unanswered
        case .refused: .refused
        }
        return Snapshot(phase: p, roundTrip: quality.lastRoundTrip, loss: quality.lossRate)
    }
}
