import BoardProtocol
import SystemIO

/// A blocking client for one board: one command at a time, each waiting for its prompt. For
/// tools and tests (`boards --probe`, reading the map back); a receiver uses ``BoardConnection``.
package final class BoardClient {
    package let spec: BoardSpec
    private let transport: any BoardTransport
    private var session: BoardSession
    /// Frames that answered no command (late replies, noise) since the client opened.
    package private(set) var noise: [BoardReplyError] = []

    /// Opens the board now; a failure is one line naming the device, the cause and the fix.
    package init(spec: BoardSpec, profile: MemoryMapProfile = .kit, options: BoardOptions = BoardOptions()) throws(BoardLinkError) {
        self.spec = spec
        transport = try BoardTransports.open(spec, profile: profile)
        session = BoardSession(replyTimeout: options.replyTimeout)
    }

    deinit { transport.close() }

    /// Sends `command` and waits for its reply (or the reply timeout of silence).
    package func perform(_ command: BoardCommand) throws(BoardLinkError) -> BoardResponse {
        let device = transport.device
        let line = session.start(command, now: .now)
        do {
            try transport.send(line, timeout: session.replyTimeout)
        } catch {
            session.reset()
            throw error
        }
        while true {
            let deadline = session.deadline
            let fds = transport.readDescriptors.map { ($0, Poller.Events.readable) }
            let ready: [Poller.Events]
            do {
                ready = try Poller.wait(fds, until: deadline)
            } catch {
                throw BoardLinkError(.lost, device: device, "\(device): poll: \(error.reason)")
            }
            let bytes: [UInt8]?
            do {
                bytes = try transport.receive()
            } catch {
                session.reset()
                throw error
            }
            if let bytes {
                for event in session.receive(bytes, now: .now) {
                    switch event {
                    case .completed(_, let response): return response
                    case .failed(_, let e): throw Self.failure(e, device: device)
                    case .noise(let e): noise.append(e)
                    }
                }
            } else if ready.contains(where: { $0.contains(.hangUp) }) {
                session.reset()
                throw BoardLinkError(.lost, device: device, "\(device): hang-up (the board went away)")
            }
            if case .failed(_, let e)? = session.checkTimeout(now: .now).first {
                throw Self.failure(e, device: device)
            }
        }
    }

    /// Reads `count` bytes of the memory map from `address`.
    package func read(address: UInt8, count: UInt8) throws(BoardLinkError) -> [UInt8] {
        let response = try perform(.read(address: address, count: count))
        guard case .values(let values) = response else {
            throw BoardLinkError(.protocolError, device: transport.device, "\(transport.device): unexpected reply \(response) to a read")
        }
        return values
    }

    /// The probe (``BoardIdentity/probe``, one bounded read): what the board is.
    package func probe() throws(BoardLinkError) -> BoardIdentity {
        let response = try perform(BoardIdentity.probe)
        guard let identity = BoardIdentity(probeReply: response) else {
            throw BoardLinkError(.protocolError, device: transport.device, BoardRefusal.notAKitBoard(response, device: transport.device))
        }
        return identity
    }

    package func close() { transport.close() }

    static func failure(_ e: BoardSessionError, device: String) -> BoardLinkError {
        BoardLinkError(e.kind == .timeout ? .noReply : .protocolError, device: device, "\(device): \(e)")
    }
}
