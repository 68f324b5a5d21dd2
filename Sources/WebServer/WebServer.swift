import Discovery
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PhoneLink
import Synchronization
import SystemIO

/// The HTTP(S) side of `analog-remote web`, on Hummingbird 2: `GET /` (the page), `/app.js`,
/// `/style.css`, `/favicon.svg` (all embedded in the binary: no CDN, no internet), and `GET /ws`,
/// the page's WebSocket, served by ``PageBridge``. Every WebSocket upgrade first passes the
/// ``OriginPolicy`` (``OriginGateChannel``). Runs on Swift concurrency's own threads; the
/// caller's thread only starts and stops it.
final class WebServer: Sendable {
    /// Raised when the server has stopped (on ``stop()`` or on its own, see ``failure``).
    let ended: EventFlag
    private let started: EventFlag
    private let shared = Mutex<Shared>(Shared())
    private let hub: PhoneHub
    private let tls: TLSConfiguration?
    private let host: String
    private let port: Int
    private let allowedOrigins: Set<OriginPolicy.Origin>
    private let logger: Logger
    /// `/teacher`, when the server has a teacher key (TeacherRoutes.swift).
    let teacher: TeacherDashboard?

    private struct Shared {
        var port: Int?
        var failure: String?
        var task: Task<Void, Never>?
    }

    /// Makes NIO's event loops (the ones Hummingbird serves on) Swift concurrency's global
    /// executor, once per process; call it before the process's first task. A page's WebSocket
    /// task then goes on, after a frame is read, on the thread that read it: without it every
    /// message woke a second thread of the concurrency pool before the phone's send loop was even
    /// told (BENCHMARKS.md, row 3w). Trap: every task of the process then runs on an event loop,
    /// so no task of `web` may block (none does: the hub only locks and posts). False when the
    /// hook was taken already (the server still works, one thread wake-up slower per message).
    static let tasksRunOnEventLoops: Bool = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

    /// TCP connections at once (pages, page loads, the odd stray client). Beyond it, new
    /// connections wait in the backlog: the phones already connected are unaffected.
    static let maximumConnections = 512

    init(hub: PhoneHub, tls: TLSConfiguration?, host: String, port: Int, allowedOrigins: Set<OriginPolicy.Origin> = [],
         logger: Logger, teacher: TeacherDashboard? = nil) throws {
        ended = try EventFlag()
        started = try EventFlag()
        self.hub = hub
        self.tls = tls
        self.host = host
        self.port = port
        self.allowedOrigins = allowedOrigins
        self.logger = logger
        self.teacher = teacher
    }

    var hasEnded: Bool { ended.isRaised }

    var failure: String? { shared.withLock { $0.failure } }

    /// Starts serving; returns the TCP port once bound (throws what binding threw).
    func start() throws -> Int {
        let task = Task { [self] in
            do {
                let policy = OriginPolicy(scheme: tls == nil ? "http" : "https", port: { [self] in shared.withLock { $0.port } ?? port },
                                          hosts: { [host] in Self.ownHosts(listening: host) }, extra: allowedOrigins)
                let app = try Self.application(hub: hub, tls: tls, host: host, port: port, origins: policy, logger: logger,
                                               teacher: teacher) { [self] bound in
                    shared.withLock { $0.port = bound }
                    started.raise()
                }
                try await app.runService(gracefulShutdownSignals: [])
            } catch is CancellationError {
            } catch {
                shared.withLock { if $0.failure == nil { $0.failure = "\(error)" } }
            }
            ended.raise()
        }
        shared.withLock { $0.task = task }
        while true {
            let ready = try Poller.wait([(started.descriptor.rawValue, .readable), (ended.descriptor.rawValue, .readable)], until: nil)
            if let bound = shared.withLock({ $0.port }) { return bound }
            if !ready[1].isEmpty { throw WebServerError(description: failure ?? "the server ended at once") }
        }
    }

    /// Stops accepting and closes every connection; waits up to 3 s.
    func stop() {
        shared.withLock { $0.task }?.cancel()
        ended.wait(timeout: .seconds(3))
    }

    /// The names and addresses a page may have used to reach a server listening on `host`
    /// (``OriginPolicy``): every local IPv4 address for `0.0.0.0`, else that address; `localhost`
    /// with loopback; the host's name with and without `.local`.
    static func ownHosts(listening host: String) -> [String] {
        var hosts = host == "0.0.0.0" ? LocalAddresses.ipv4(includingLoopback: true) : [host]
        if hosts.contains(where: { $0.hasPrefix("127.") }) || host == "localhost" { hosts += ["localhost", "127.0.0.1"] }
        if let name = HostName.current(), !name.isEmpty { hosts += [name, name + ".local"] }
        return hosts
    }

    static func application(hub: PhoneHub, tls: TLSConfiguration?, host: String, port: Int, origins: OriginPolicy, logger: Logger,
                            teacher: TeacherDashboard? = nil, bound: @escaping @Sendable (Int) -> Void) throws -> some ApplicationProtocol {
        let router = Router(context: SocketRequestContext.self)
        router.get("/") { _, _ in PageAssets.response(.index) }
        router.get("/index.html") { _, _ in PageAssets.response(.index) }
        router.get("/app.js") { _, _ in PageAssets.response(.script) }
        router.get("/style.css") { _, _ in PageAssets.response(.style) }
        router.get("/favicon.svg") { _, _ in PageAssets.response(.icon) }
        router.get("/favicon.ico") { _, _ in PageAssets.response(.icon) }

        let limits = PageBridge.Limits()
        let sockets = Router(context: SocketRequestContext.self)
        sockets.ws("/ws") { inbound, outbound, context in
            let channel = context.requestContext.channel
            await WebSocketCloseGuard.install(on: channel)
            try await PageBridge.serve(hub: hub, limits: limits, from: channel.remoteAddress?.ipAddress ?? "",
                                       inbound: inbound, outbound: outbound, logger: logger)
        }
        teacher?.install(router, sockets: sockets)
        let ws = WebSocketServerConfiguration(maxFrameSize: limits.maximumMessage,
                                              autoPing: .enabled(timePeriod: .seconds(10)),
                                              closeTimeout: .seconds(1))
        let responder = sockets.buildResponder()
        let refusals = RefusalNotices()
        let gated = HTTPServerBuilder { http in
            OriginGateChannel(base: HTTP1WebSocketUpgradeChannel(responder: http, webSocketResponder: responder,
                                                                 configuration: .init(http1: .init(idleTimeout: .seconds(30)), ws: ws)),
                              policy: origins, logger: logger, refusals: refusals)
        }
        let server = try tls.map { try HTTPServerBuilder.tls(gated, tlsConfiguration: $0) } ?? gated
        // Hummingbird's own log: its errors at shutdown (cancelled child channels) are noise; a
        // failure to bind is thrown, and the page's errors are ours to log.
        var quiet = logger
        quiet.logLevel = .critical
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil,
                                 availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? port) },
            logger: quiet)
    }
}

/// The request context of the server: Hummingbird's, plus the connection's channel (its peer's
/// address for the per-address page and login limits, its pipeline for ``WebSocketCloseGuard``).
struct SocketRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

struct WebServerError: Error, CustomStringConvertible {
    let description: String
}

/// The page's files, embedded in the binary by SwiftPM (`resources: [.embedInCode(…)]`).
enum PageAssets {
    enum File { case index, script, style, icon }

    static func response(_ file: File) -> Response {
        let (bytes, type): ([UInt8], String) = switch file {
        case .index: (PackageResources.index_html, "text/html; charset=utf-8")
        case .script: (PackageResources.app_js, "text/javascript; charset=utf-8")
        case .style: (PackageResources.style_css, "text/css; charset=utf-8")
        case .icon: (PackageResources.favicon_svg, "image/svg+xml")
        }
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'self'; connect-src 'self'; img-src 'self' data:"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
