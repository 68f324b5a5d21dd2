import ControlPlane
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import PhoneLink
import Synchronization

/// THE seam between the server's async world (Hummingbird, one task per WebSocket) and the
/// phones' synchronous poll loops (one ``PhoneController`` thread per driving page).
///
/// Both directions are non-blocking hand-offs, so neither side ever waits for the other:
///
/// ```
///  WebSocket task                                  phone's send-loop thread
///  ─────────────                                   ────────────────────────
///  text message ─▶ PageMessage.decode ─▶ PhoneHub ─▶ EventMailbox.post ─▶ poll(2) wakes, SendLoop
///  writer task  ◀─ AsyncStream (newest 32 kept)  ◀─ sink(PageReport)  ◀─ ControlSession snapshot
/// ```
///
/// - Inbound: the mailbox is bounded (latest news wins) and readable as a descriptor, so the loop
///   polls it next to its UDP socket and its deadlines: the loop never blocks on the server.
/// - Outbound: `AsyncStream.Continuation.yield` from any thread; a slow page loses old reports,
///   never blocks a loop, never grows memory.
/// - The end of the WebSocket, however it ends (close frame, TCP reset, oversized or malformed
///   frame, flood), is `PhoneHub.close`: that page's controller sends neutral ×3 at once, then bye.
enum PageBridge {
    struct Limits: Sendable {
        /// Messages a second one page may send (the page sends at most ~60 a second).
        var rate: Double = 200
        var burst: Double = 100
        /// Refused or dropped messages after which the page is disconnected.
        var strikes = 1000
        /// Largest WebSocket message accepted (the connection closes with 1009 beyond it).
        var maximumMessage = 1024
    }

    /// `address`: the client's IP address, for the per-address page limit.
    static func serve(hub: PhoneHub, limits: Limits, from address: String, inbound: WebSocketInboundStream,
                      outbound: WebSocketOutboundWriter, logger: Logger) async throws {
        let (reports, continuation) = AsyncStream<PageReport>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let outbox = Outbox(continuation)
        let id: PhoneHub.PageID
        do throws(PhoneHub.PageRefusal) {
            id = try hub.open(from: address, sink: outbox.post)
        } catch {
            try await outbound.write(.text(PageReport.error(error.description).json))
            try await outbound.close(.unknown(1013), reason: error.closeReason)
            return
        }
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await report in reports {
                    guard let report = outbox.take(report) else { continue }
                    try await outbound.write(.text(report.json))
                }
            }
            var bucket = TokenBucket(rate: limits.rate, burst: limits.burst)
            var strikes = 0
            var warnedFlood = false
            do {
                for try await message in inbound.messages(maxSize: limits.maximumMessage) {
                    guard bucket.take(now: .now) else {
                        strikes += 1
                        if !warnedFlood {
                            warnedFlood = true
                            hub.refuse(id, "too many messages: at most \(Int(limits.rate)) a second; the extra ones are dropped")
                        }
                        if strikes >= limits.strikes { break }
                        continue
                    }
                    guard case .text(let text) = message else {
                        strikes += 1
                        hub.refuse(id, "binary messages are not understood: send JSON text")
                        continue
                    }
                    do throws(PageMessageError) {
                        hub.handle(try PageMessage.decode(text), from: id)
                    } catch {
                        strikes += 10
                        hub.refuse(id, error.description)
                        if strikes >= limits.strikes { break }
                    }
                }
            } catch {
                logger.debug("page WebSocket ended", metadata: ["error": "\(error)"])
            }
            let flooded = strikes >= limits.strikes
            hub.close(id, why: flooded ? "the page sent too many bad or extra messages" : "the page's WebSocket closed")
            if flooded {
                continuation.yield(.error("disconnected: too many bad or extra messages"))
            }
            continuation.finish()
            try? await group.next()
            group.cancelAll()
            if flooded { try? await outbound.close(.policyViolation, reason: "flood") }
        }
    }
}

/// A page's outgoing reports. The robot list is a snapshot (newest wins) and is broadcast on every
/// join and leave, so with 200 pages it would crowd the errors and statuses out of a bounded
/// buffer: it is kept aside, and the stream carries at most one "the list changed" marker.
final class Outbox: Sendable {
    private let continuation: AsyncStream<PageReport>.Continuation
    private let robots = Mutex<(latest: [PageReport.Robot]?, marked: Bool)>((nil, false))

    init(_ continuation: AsyncStream<PageReport>.Continuation) {
        self.continuation = continuation
    }

    /// Any thread; never blocks.
    func post(_ report: PageReport) {
        guard case .robots(let list) = report else {
            continuation.yield(report)
            return
        }
        let mark = robots.withLock { r -> Bool in
            r.latest = list
            defer { r.marked = true }
            return !r.marked
        }
        if mark { continuation.yield(.robots([])) }
    }

    /// What to write for `report` taken from the stream (the marker becomes the latest list).
    func take(_ report: PageReport) -> PageReport? {
        guard case .robots = report else { return report }
        return robots.withLock { r in
            r.marked = false
            defer { r.latest = nil }
            return r.latest.map(PageReport.robots)
        }
    }
}
