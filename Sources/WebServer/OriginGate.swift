import ControlPlane
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import RemoteWire
import Synchronization

/// Puts ``OriginPolicy`` in front of every WebSocket upgrade of the server, whatever its path:
/// a refused upgrade is answered `403 Forbidden` with the reason as text, and the connection
/// closes before the upgrade code sees the request. Plain HTTP requests (the page, its files)
/// pass untouched.
///
/// Why a channel handler and not the router's `shouldUpgrade`: Hummingbird answers a refused
/// upgrade with `400`, or with a redirect to the same path, never with `403`.
///
/// Wraps the child channel the way `TLSChannel` does: `TLSChannel(OriginGateChannel(base))`.
struct OriginGateChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let policy: OriginPolicy
    let logger: Logger
    /// Shared by every connection: a page that retries its WebSocket in a loop (or a script)
    /// writes one line per address every 10 s, not one per attempt.
    let refusals: RefusalNotices

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Right behind the HTTP request decoder, so before the upgrade handler.
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(OriginGateHandler(policy: policy, logger: self.logger, refusals: refusals),
                                                           position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Looks at the first request of a connection (the only one an upgrade can ride on: Hummingbird
/// sends a later upgrade request to a new connection), then leaves the pipeline.
final class OriginGateHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let policy: OriginPolicy
    private let logger: Logger
    private let refusals: RefusalNotices
    private var refused = false

    init(policy: OriginPolicy, logger: Logger, refusals: RefusalNotices) {
        self.policy = policy
        self.logger = logger
        self.refusals = refusals
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }   // the rest of a refused request
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let upgrade = head.headers["upgrade"].contains { $0.lowercased().contains("websocket") }
        let origin = head.headers["origin"].first
        guard upgrade, let why = policy.refusal(origin) else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refused = true
        let from = context.remoteAddress?.ipAddress ?? "?"
        if let more = refusals.allow(from) {
            var metadata: Logger.Metadata = ["origin": "\(DisplayText.sanitised(String(origin?.prefix(100) ?? "none")))", "from": "\(from)"]
            if more > 0 { metadata["refused_since"] = "\(more)" }
            logger.info("refused a WebSocket", metadata: metadata)
        }
        let body = context.channel.allocator.buffer(string: "403 Forbidden: \(why)\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .forbidden, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}

/// The refused-WebSocket lines of one server: one per client address per 10 s
/// (``PerSourceNotices``), with how many were refused unlogged since that address's last line.
final class RefusalNotices: Sendable {
    private struct State {
        var notices = PerSourceNotices<String>()
        var unlogged: [String: Int] = [:]
    }
    private let state = Mutex(State())

    /// nil: no line now. Otherwise log one, saying how many went unlogged before it.
    func allow(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { s in
            guard s.notices.allow(address, at: now) else {
                if s.unlogged.count < PerSourceNotices<String>.capacity || s.unlogged[address] != nil { s.unlogged[address, default: 0] += 1 }
                return nil
            }
            return s.unlogged.removeValue(forKey: address) ?? 0
        }
    }
}
