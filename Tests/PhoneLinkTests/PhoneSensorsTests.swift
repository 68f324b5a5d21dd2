import BoardProtocol
import ControlPlane
import ControlWire
import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import SystemIO
import Testing

/// What the robot senses reaches the phone page: a receiver (here a UDP socket speaking the
/// control protocol) accepts the page's controller and sends `robot-sensors` (Protocol.md
/// §7.9.1); the page is sent `{"t":"sensors","sensors":{…}}` with the board's values.
@Suite(.serialized) struct PhoneSensorsTests {
    @Test func aSensorsReportIsJSONThePageParses() {
        let s = RobotSensors(sample: 1, block: SensorBlock(sensors: [12, 34, 0, 255], switchValue: 1, temperature: -2, humidity: 40))
        #expect(PageReport.sensors(s).json
                == #"{"sensors":{"humidity":40,"sensor1":12,"sensor2":34,"sensor3":0,"sensor4":255,"switch":1,"temperature":-2},"t":"sensors"}"#)
    }

    @Test func theReceiversSensorReportsReachThePage() throws {
        let socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { socket.close() }
        let address = try socket.localAddress()
        let hub = PhoneHub(settings: .init(session: "", rate: 50, timing: .init(stale: .seconds(5), silent: .seconds(10)),
                                           limits: .init(pages: 8, drivers: 4)), logger: Logger(label: "test"))
        hub.setRobots([.init(id: "p1", name: "robot 1", peer: .init(address: address, label: "robot 1"))])
        let reports = PhoneHubTests.Reports()
        let page = try #require(hub.open(sink: reports.add))
        defer {
            hub.close(page, why: "test")
            let end = ContinuousClock.now + .seconds(5)
            while hub.running > 0 && ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.01) }
        }
        hub.handle(.join(robot: "p1", name: "Ann", code: nil), from: page)

        // The receiver's side: accept the hello (echoing its nonce), then report two readings.
        var channel = ReliableChannel(connection: 0x1234_5678)
        var controller: SocketAddress?
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = ContinuousClock.now + .seconds(5)
        while controller == nil, ContinuousClock.now < deadline {
            _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: .milliseconds(50))
            while let (n, from) = try socket.receive(into: &buffer) {
                guard n != 8, let d = try? ControlDatagram.decode(Array(buffer[..<n])) else { continue }
                for case .delivered(.hello(let hello)) in channel.receive(d, now: .now) {
                    try channel.send(.accept(.init(peerID: 7, displayName: "robot 1", failsafeMilliseconds: 250, rateHertz: 50,
                                                   echo: hello.nonce)))
                    controller = from
                }
            }
        }
        let to = try #require(controller, "no hello from the page's controller")
        for d in channel.poll(now: .now).datagrams { _ = try socket.send(d, to: to) }
        let first = SensorBlock(sensors: [10, 20, 30, 40], switchValue: 0, temperature: 21, humidity: 45)
        let second = SensorBlock(sensors: [200, 0, 255, 1], switchValue: 1, temperature: -7, humidity: 80)
        func sent(_ block: SensorBlock) -> Bool {
            reports.all.contains { $0 == .sensors(RobotSensors(sample: $0.sample ?? 0, block: block)) }
        }
        for (sample, block) in [(UInt32(1), first), (2, second)] {
            let end = ContinuousClock.now + .seconds(5)
            while !sent(block), ContinuousClock.now < end {
                _ = try socket.send(channel.unreliable(.robotSensors(RobotSensors(sample: sample, block: block))), to: to)
                // Answer whatever the controller sends (acks, pings) by reading it.
                _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: .milliseconds(50))
                while let (n, _) = try socket.receive(into: &buffer) {
                    if n != 8, let d = try? ControlDatagram.decode(Array(buffer[..<n])) { _ = channel.receive(d, now: .now) }
                }
            }
            #expect(sent(block), "the page was not sent \(block): \(reports.all)")
        }
        let json = reports.all.compactMap { r -> String? in if case .sensors = r { r.json } else { nil } }
        #expect(json.contains(#"{"sensors":{"humidity":80,"sensor1":200,"sensor2":0,"sensor3":255,"sensor4":1,"switch":1,"temperature":-7},"t":"sensors"}"#),
                "\(json)")
    }
}

extension PageReport {
    /// The sample of a sensors report (nil for any other report).
    var sample: UInt32? { if case .sensors(let s) = self { s.sample } else { nil } }
}
