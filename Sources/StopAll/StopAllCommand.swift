#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import ControlPlane
import Discovery
import RemoteWire
import SystemIO

/// What `analog-remote stop-all` was asked to do.
public struct StopAllOptions: Sendable {
    public var session: String
    public var release: Bool
    public var teacherKey: String?
    /// `HOST:PORT` each; when given, no mDNS is used.
    public var peers: [String]
    /// How long to browse the session for receivers (without --peer).
    public var timeout: Duration

    public init(session: String, release: Bool, teacherKey: String?, peers: [String], timeout: Duration) {
        self.session = session
        self.release = release
        self.teacherKey = teacherKey
        self.peers = peers
        self.timeout = timeout
    }
}

/// `analog-remote stop-all`: the teacher's stop (or release) for every receiver of a session
/// (Protocol.md §7.6). Each receiver first gets an unsigned query, which its reply answers with
/// its name; then a command signed for that receiver alone (its name is the command's target,
/// and the nonce is fresh), so a command captured on its way to one robot is refused by every
/// other. Each is sent up to 10 times over 0.45 s (unreliable: repeats make loss irrelevant) as
/// soon as the receiver is known, until it replies. Receivers come from the session's DNS-SD
/// browse (for `timeout`) or from `--peer`.
///
/// Prints a line per receiver on stdout as it answers — `stopped "NAME" ADDRESS`,
/// `released …`, `refused by "NAME" ADDRESS: WHY` — then `no answer from …` for the silent ones
/// and `reached N of M receivers`. Exit 0 when every receiver took the command, 1 otherwise.
public enum StopAllCommand {
    public static let repeats = 10
    public static let spacing: Duration = .milliseconds(50)
    /// How long to wait for a reply after the last repeat.
    public static let replyGrace: Duration = .milliseconds(300)

    final class Target {
        let label: String?
        /// The receiver's DNS-SD instance name: a receiver is counted once however many
        /// addresses it has (nil for `--peer`, where the address is all there is).
        let identity: String?
        let address: SocketAddress
        var sent = 0
        var nextSend: ContinuousClock.Instant
        /// The query first, then (once the receiver named itself) the command signed for it.
        var nonce: UInt64
        var datagram: [UInt8]
        var querying = true
        var reply: ControlMessage.StopAllReply?
        init(label: String?, identity: String? = nil, address: SocketAddress, now: ContinuousClock.Instant, nonce: UInt64, query: [UInt8]) {
            self.label = label
            self.identity = identity
            self.address = address
            self.nonce = nonce
            datagram = query
            nextSend = now
        }
        var done: Bool { reply != nil || sent >= StopAllCommand.repeats }
    }

    public static func run(_ options: StopAllOptions, status: StatusLine) throws -> CommandOutcome {
        let connection = UInt32.random(in: 1...UInt32.max)
        var rng = SystemRandomNumberGenerator()
        func datagram(_ message: ControlMessage.StopAll) -> [UInt8] {
            ControlDatagram(header: ControlHeader(type: .stopAll, connection: connection),
                            payload: ControlMessage.stopAll(message).encodePayload()[...]).encode()
        }
        func newTarget(label: String?, identity: String? = nil, address: SocketAddress, now: ContinuousClock.Instant) -> Target {
            let nonce = UInt64.random(in: 0...UInt64.max, using: &rng)
            let query = ControlMessage.StopAll(action: .query, unixMillis: WallClock.unixMillis(), nonce: nonce, session: options.session)
            return Target(label: label, identity: identity, address: address, now: now, nonce: nonce, query: datagram(query))
        }
        /// The receiver named itself: the command signed for it alone, with a fresh nonce.
        func command(for t: Target, name: String, now: ContinuousClock.Instant) {
            var c = ControlMessage.StopAll(action: options.release ? .release : .stop, unixMillis: WallClock.unixMillis(),
                                           nonce: UInt64.random(in: 0...UInt64.max, using: &rng), session: options.session, target: name)
            if let key = options.teacherKey { c.sign(key: Array(key.utf8)) }
            t.querying = false
            t.nonce = c.nonce
            t.datagram = datagram(c)
            t.sent = 0
            t.nextSend = now
        }
        do {
            let signals = try SignalWatcher()
            let start = ContinuousClock.now
            var targets: [Target] = []
            var browser: SessionBrowser?
            var mailbox: EventMailbox<BrowserEvent>?
            var directory: ReceiverDirectory?
            if options.peers.isEmpty {
                let session = try SessionID(options.session)
                let box = try EventMailbox<BrowserEvent>()
                do throws(DiscoveryError) {
                    browser = try SessionBrowser(session: session, lookups: .once, onEvent: box.post)
                } catch {
                    throw error
                }
                mailbox = box
                directory = ReceiverDirectory(session: session)
                status.update("looking for the receivers of session \"\(options.session)\"…", force: true)
            } else {
                for peer in options.peers {
                    do {
                        targets.append(newTarget(label: nil, address: try SocketAddress.resolve(peer), now: start))
                    } catch {
                        throw CommandFailure("--peer \(peer): \(error) (check the name, or give an IP address)", kind: .networkUnavailable)
                    }
                }
            }
            defer { browser?.stop() }
            let browseEnd = browser == nil ? start : start + options.timeout
            var sockets: [SocketAddress.Family: UDPSocket] = [:]
            defer { for s in sockets.values { s.close() } }
            var buffer = [UInt8](repeating: 0, count: 2048)
            var lastSendAt = start

            while true {
                let now = ContinuousClock.now
                // Send what is due.
                for t in targets where !t.done && t.nextSend <= now {
                    let socket = try sockets[t.address.family] ?? {
                        let s = try UDPSocket.sender(for: t.address)
                        sockets[t.address.family] = s
                        return s
                    }()
                    _ = try? socket.send(t.datagram, to: t.address)
                    t.sent += 1
                    t.nextSend = now + spacing
                    lastSendAt = now
                }
                let sending = targets.contains { !$0.done }
                let waitingForReplies = targets.contains { $0.reply == nil } && now < lastSendAt + replyGrace
                if !sending && !waitingForReplies && now >= browseEnd { break }

                var times = targets.filter { !$0.done }.map(\.nextSend)
                if browseEnd > now { times.append(browseEnd) }
                if waitingForReplies { times.append(lastSendAt + replyGrace) }
                let wake = times.min()
                var fds: [(fd: Int32, events: Poller.Events)] = [(signals.readableDescriptor, .readable)]
                if let mailbox { fds.append((mailbox.descriptor, .readable)) }
                for s in sockets.values { fds.append((s.descriptor.rawValue, .readable)) }
                _ = try Poller.wait(fds, until: wake)
                if signals.signal != nil { break }

                for socket in sockets.values {
                    while let (length, from) = try socket.receive(into: &buffer) {
                        guard length <= buffer.count, let target = targets.first(where: { $0.address == from }),
                              let d = try? ControlDatagram.decode(Array(buffer[..<length])), d.header.type == .stopAllReply,
                              case .stopAllReply(let reply)? = try? ControlMessage.decode(type: .stopAllReply, payload: d.payload),
                              reply.nonce == target.nonce, target.reply == nil else { continue }
                        if target.querying {
                            if reply.outcome == .refused {
                                target.reply = reply   // e.g. another session: said at once
                            } else {
                                command(for: target, name: reply.displayName, now: .now)
                                continue
                            }
                        }
                        target.reply = reply
                        status.clear()
                        StandardOutput.write(describe(target, reply) + "\n")
                    }
                }
                if let mailbox, var dir = directory {
                    let now = ContinuousClock.now
                    for event in mailbox.drain() {
                        for change in dir.apply(event, now: now) {
                            switch change {
                            case .available(let r), .updated(let r):
                                // By identity, not address: a receiver whose AAAA answered after
                                // its A is still one receiver.
                                guard let address = r.destination, !targets.contains(where: { $0.identity == r.instance }) else { continue }
                                targets.append(newTarget(label: r.name, identity: r.instance, address: address, now: now))
                            default:
                                break
                            }
                        }
                    }
                    directory = dir
                    status.update("session \"\(options.session)\": \(targets.count) receiver\(targets.count == 1 ? "" : "s") found")
                }
            }
            status.clear()
            for t in targets where t.reply == nil {
                StandardOutput.write("no answer from \(name(t, nil)) (sent \(t.sent) time\(t.sent == 1 ? "" : "s"); is it running?)" + "\n")
            }
            let took = targets.filter { $0.reply.map { $0.outcome != .refused } ?? false }.count
            StandardOutput.write("reached \(took) of \(targets.count) receiver\(targets.count == 1 ? "" : "s")" + "\n")
            if targets.isEmpty {
                throw CommandFailure("no receivers found in session \"\(options.session)\" within \(options.timeout) (are they running and announced in this session?)",
                                     kind: .failed)
            }
            return took == targets.count ? .done : .incomplete
        } catch let error as SystemError {
            throw CommandFailure("stop-all: \(error)", kind: .networkUnavailable)
        } catch let error as SessionIDError {
            throw CommandFailure("--session: \(error)", kind: .badArgument)
        }
    }

    static func name(_ t: Target, _ reply: ControlMessage.StopAllReply?) -> String {
        let label = t.label ?? reply?.displayName
        return label.map { "\(ConsoleLogHandler.quote($0)) \(t.address)" } ?? "\(t.address)"
    }

    static func describe(_ t: Target, _ reply: ControlMessage.StopAllReply) -> String {
        switch reply.outcome {
        case .stopped: "stopped \(name(t, reply))"
        case .released: "released \(name(t, reply))"
        case .refused: "refused by \(name(t, reply)): \(reply.text)"
        }
    }
}
