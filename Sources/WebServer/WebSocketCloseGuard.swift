import NIOCore
import NIOWebSocket

/// RFC 6455 §5.5.1: after sending a Close frame an endpoint sends no more data frames. The
/// WebSocket library does not hold to that by itself: a page's report written while a Close is
/// going out (the page closed its socket, the server closed a flooding page) can follow it, and
/// Chromium then fails the socket with "Data frame received after close". This handler sits just
/// in front of the frame encoder and drops every frame written after the first Close (the writer
/// is told it was written: it is about to end anyway).
final class WebSocketCloseGuard: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var closeSent = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if closeSent {
            promise?.succeed()
            return
        }
        if unwrapOutboundIn(data).opcode == .connectionClose { closeSent = true }
        context.write(data, promise: promise)
    }

    /// Puts a guard on an upgraded WebSocket channel (right after its frame encoder); a channel
    /// already closed or without an encoder is left as it is.
    static func install(on channel: any Channel) async {
        try? await channel.eventLoop.submit {
            let encoder = try channel.pipeline.syncOperations.handler(type: WebSocketFrameEncoder.self)
            try channel.pipeline.syncOperations.addHandler(WebSocketCloseGuard(), position: .after(encoder))
        }.get()
    }
}
