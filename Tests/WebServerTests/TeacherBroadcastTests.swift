import ControlPlane
import ControlWire
import RemoteWire
import SystemIO
import Testing
@testable import WebServer

/// The dashboard's Stop all before any lookup: the signed stop for the whole session to every
/// destination (here one loopback socket stands in for a link's broadcast address), three times
/// 50 ms apart, one nonce.
@Suite struct TeacherBroadcastTests {
    @Test func stopAllSendsTheSignedSessionStopThreeTimesToEveryDestination() throws {
        let link = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { link.close() }
        let address = try link.localAddress()
        let key = Array("teacher-secret".utf8)
        var broadcast = TeacherBroadcast(session: "class-3b", macKey: key, destinations: { [address] })
        defer { broadcast.close() }
        let start = ContinuousClock.now
        #expect(broadcast.nextDeadline == nil, "nothing before Stop all")
        broadcast.stop(now: start)
        var ms = 0
        while let next = broadcast.nextDeadline {
            ms = Int((next - start) / .milliseconds(1))
            broadcast.flush(now: next)
        }
        #expect(ms == 100, "the third send at 100 ms")
        var stops: [ControlMessage.StopAll] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while let (length, _) = try link.receive(into: &buffer, timeout: .milliseconds(500)) {
            let d = try ControlDatagram.decode(Array(buffer[..<length]))
            guard case .stopAll(let s)? = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
            stops.append(s)
            if stops.count == 3 { break }
        }
        #expect(stops.count == 3)
        #expect(stops.allSatisfy { $0.action == .stop && $0.target.isEmpty && $0.session == "class-3b" && $0.verify(key: key) })
        #expect(Set(stops.map(\.nonce)).count == 1)
    }
}
