import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// A classmate with a raw socket against a real `control` driving a real `receive` (Protocol.md
/// §8.1): it sniffs the driver's datagrams (as anyone on the Wi-Fi sees them), then forges plain
/// control datagrams with the live connection's ids from its own port, and hellos from the
/// driver's own address and port. The driver must keep driving: no motor write of 0 between its
/// first forward and its own exit, its later states applied, its controller ending with status 0.
@Suite(.serialized, .enabled(if: SpoofedUDP.available, "needs CAP_NET_RAW (raw sockets) to forge source addresses"))
struct ForgedDatagramEndToEndTests {
    static let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"
    static let forwardA = ClassroomReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255)

    /// A receiver in `mode` and a controller that drives it forward.
    struct Rig {
        let receiver: ClassroomReceiver
        let control: ChildProcess

        init(mode: String) throws {
            var receiveArgs = ["--accept", mode]
            var controlArgs = ["--name", "Ann"]
            switch mode {
            case "paired": receiveArgs += ["--pairing-code", "4711"]; controlArgs += ["--pair", "4711"]
            case "secret": receiveArgs += ["--secret", ForgedDatagramEndToEndTests.words]
                controlArgs += ["--secret", ForgedDatagramEndToEndTests.words]
            default: break
            }
            receiver = try ClassroomReceiver(receiveArgs)
            control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(receiver.port)", "--input", "stdin"]
                                       + controlArgs, stdin: true)
            guard control.waitForOutput(timeout: .seconds(10), { _, err in err.contains("accepted by") }) else {
                throw ClassroomTestError("not accepted: \(control.stderr)\n\(receiver.process.stderr)")
            }
            control.write("0 none\n")
            control.write("0 forward\n")
            guard receiver.waitForMap({ $0 == ClassroomReceiver.forwardMap }) else {
                throw ClassroomTestError("never drove: \(control.stderr)\n\(receiver.process.stderr)")
            }
        }

        /// After the attack: a stranger's ping is answered (so the receiver has read everything
        /// sent before it), then the driver's next two states both reach the board, the
        /// controller is still running and ends with status 0, and no motor write between its
        /// first forward and its bye was a stop.
        func expectTheDriverNeverNoticed(_ what: String) throws {
            try expectStillDriving(what)
            try finish(what)
        }

        /// A stranger's ping is answered (the receiver has read everything sent before it), then
        /// the driver's next two states reach the board and its controller still runs.
        func expectStillDriving(_ what: String) throws {
            let marker = try ClassroomPeer(port: receiver.port)
            try marker.send(raw: marker.channel.unreliable(.ping(id: 7, sentNanos: 7)))
            #expect(try marker.pump { $0.contains(.pong(id: 7, sentNanos: 7)) }, "\(what): the receiver did not answer a ping")
            control.write("0 forward+a\n")
            #expect(receiver.waitForMap { $0 == ForgedDatagramEndToEndTests.forwardA },
                    "\(what): the driver's next state never reached the board\n\(receiver.process.stderr)\n\(control.stderr)")
            control.write("0 forward\n")
            #expect(receiver.waitForMap { $0 == ClassroomReceiver.forwardMap }, "\(what): the driver lost the robot")
            #expect(control.isRunning, "\(what): the controller ended: \(control.stderr)")
        }

        /// No motor write of 0 since the first forward; the controller ends with status 0.
        func finish(_ what: String) throws {
            let maps = receiver.maps
            let first = try #require(maps.firstIndex(of: ClassroomReceiver.forwardMap))
            let stops = maps[first...].filter(ClassroomReceiver.motorsStopped).count
            #expect(stops == 0, "\(what): \(stops) motor writes of 0 while the driver drove\n\(receiver.process.stderr)")
            control.closeStdin()
            #expect(control.wait() == 0, "\(what): \(control.stderr)")
            // Its channel was never reset or moved: its bye still arrives in order and frees the
            // robot at once (on the old receiver a forged hello reset the channel, and the bye
            // waited there, out of order, for ever).
            #expect(receiver.process.waitForOutput(timeout: .seconds(5)) { _, err in err.contains("owner said bye") },
                    "\(what): the driver's bye was lost\n\(receiver.process.stderr)")
            #expect(!receiver.process.stderr.contains("moved to a new address"), "\(what): \(receiver.process.stderr)")
            _ = try receiver.stop()
        }
    }

    /// The ids of the driver's connection as an on-path listener reads them from one of its
    /// datagrams: its source port, sender instance and connection id (0 if it sent none yet).
    static func sniffDriver(toPort port: UInt16, sealed: Bool) throws -> (port: UInt16, instance: UInt32, connectionID: UInt64) {
        let sniffer = try UDPSniffer()
        let seen = try #require(sniffer.first(toPort: port, timeout: .seconds(5)) { payload in
            guard sealed else { return true }
            return payload.count >= SealedEnvelope.overhead && payload[3] == ControlType.sealed.rawValue
        }, "no datagram of the driver seen")
        let d = seen.payload
        guard d.count >= ControlHeader.extendedSize, d[0] == 0x41, d[2] == 2 else { return (seen.sourcePort, 0, 0) }
        let instance = d[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let id = d[20..<28].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (seen.sourcePort, instance, id)
    }

    static func datagram(_ message: ControlMessage, instance: UInt32, sequence: UInt32, connectionID: UInt64) -> [UInt8] {
        let header = ControlHeader(type: message.type, connection: instance, sequence: message.type.isReliable ? sequence : 0,
                                   connectionID: connectionID)
        return ControlDatagram(header: header, payload: message.encodePayload()[...]).encode()
    }

    /// Under `secret`: plain bye, ping, hello, data and ack carrying the live connection's sender
    /// instance and connection id, from another port (every sequence number a bye could need).
    /// Before the fix the plain bye moved the connection to the attacker and freed the robot.
    @Test func plainDatagramsWithALiveConnectionsIdsFromAnotherPortChangeNothing() throws {
        let rig = try Rig(mode: "secret")
        let ids = try Self.sniffDriver(toPort: rig.receiver.port, sealed: true)
        #expect(ids.connectionID != 0)
        let attacker = try ClassroomPeer(port: rig.receiver.port)
        let plain: [ControlMessage] = [.ping(id: 1, sentNanos: 1), .bye, .data(channel: 1, bytes: [1]), .ack(selective: 0),
                                       .hello(.init(peerID: 9, displayName: "Mallory")), .pong(id: 1, sentNanos: 1)]
        for message in plain {
            for sequence in UInt32(1)...64 where message.type.isReliable || sequence == 1 {
                try attacker.send(raw: Self.datagram(message, instance: ids.instance, sequence: sequence, connectionID: ids.connectionID))
            }
        }
        try rig.expectTheDriverNeverNoticed("plain datagrams with the connection's ids")
    }

    /// A hello forged from the driver's own address and port — in another session, with a wrong
    /// pairing code, and a plain one — in every mode that names its drivers. Before the fix its
    /// deny ended the real controller (first, paired, secret) and under `secret` its challenge,
    /// sealed under the driver's keys, cost the controller its keys.
    @Test(arguments: ["first", "paired", "secret"])
    func aHelloForgedFromTheDriversOwnAddressChangesNothing(mode: String) throws {
        let rig = try Rig(mode: mode)
        let ids = try Self.sniffDriver(toPort: rig.receiver.port, sealed: mode == "secret")
        let raw = try SpoofedUDP()
        let hellos: [ControlMessage.Hello] = [
            .init(peerID: 9, displayName: "Mallory", session: "another-class", nonce: 5),
            .init(peerID: 9, displayName: "Mallory", pairingCode: "0000", nonce: 6),
            .init(peerID: 9, displayName: "Mallory"),
        ]
        // One at a time, the driver checked after each: on the old receiver the first one's deny
        // ended the controller in every mode.
        for (i, hello) in hellos.enumerated() {
            let instance = UInt32(0x0BAD_0000 + i)
            try raw.send(Self.datagram(.hello(hello), instance: instance, sequence: 1, connectionID: 0),
                         fromPort: ids.port, toPort: rig.receiver.port)
            // The hello again with the driver's own sender instance when it is known.
            if ids.instance != 0 {
                try raw.send(Self.datagram(.hello(hello), instance: ids.instance, sequence: 1, connectionID: 0),
                             fromPort: ids.port, toPort: rig.receiver.port)
            }
            try rig.expectStillDriving("forged hello \(i + 1) (\(hello.session.isEmpty ? "this session" : hello.session)) under --accept \(mode)")
        }
        try rig.finish("forged hellos under --accept \(mode)")
    }
}

/// What a receiver tells other drivers about its owner (Protocol.md §7.9, §8.5): a display name,
/// never the owner's address — the one thing a spoofer would need.
@Suite(.serialized) struct OwnerNameEndToEndTests {
    @Test func ownedByNeverShowsAPlainOwnersAddress() throws {
        let r = try ClassroomReceiver(["--accept", "first", "--failsafe-ms", "5000"])
        let plain = try ClassroomPeer(port: r.port)
        try plain.send(.neutral)
        try plain.send(ControllerState(angle: 0, buttons: .forward))
        #expect(r.waitForMap { $0 == ClassroomReceiver.forwardMap })
        let bob = try ClassroomPeer(port: r.port)
        try bob.say(.hello(.init(peerID: 2, displayName: "Bob", nonce: 3)))
        #expect(try bob.pump { $0.contains { if case .robotState(let s) = $0, case .owned = s.state { true } else { false } } })
        let owned = bob.delivered.compactMap { m -> String? in
            if case .robotState(let s) = m, case .owned(let by) = s.state { return by.text } else { return nil }
        }
        let port = try plain.socket.localAddress().port
        #expect(owned.allSatisfy { !$0.contains("127.0.0.1") && !$0.contains("\(port)") }, "\(owned)")
        #expect(owned.last == "a controller without a name")
        _ = try r.stop()
    }
}
