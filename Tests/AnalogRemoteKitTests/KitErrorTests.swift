import AnalogRemoteKit
import Foundation
import SystemIO
import Testing

/// The errors the documentation promises, as a program sees them.
@Suite(.serialized) struct KitErrorTests {
    /// An address without a port is a bad argument, not a network failure.
    @Test func anAddressWithoutAPortIsAnInvalidArgument() async throws {
        let session = try await RemoteSession(sessionID: "kit-errors", displayName: "Ada", discovery: false)
        for address in ["127.0.0.1", "robot.local", "[::1]", "127.0.0.1:0", "127.0.0.1:notaport"] {
            do {
                _ = try await session.connect(to: address, timeout: .seconds(1))
                Issue.record("\(address) connected")
            } catch let error as AnalogRemoteError {
                #expect(error.code == .invalidArgument, "\(address): \(error)")
                #expect(error.description.contains("HOST:PORT"), "\(error)")
            }
        }
        do {
            _ = try await RobotController(.address("127.0.0.1"), displayName: "no-port", timeout: .seconds(1))
            Issue.record("a controller connected without a port")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .invalidArgument, "\(error)")
        }
        await session.close()
    }

    /// A connect whose task is cancelled ends with `CancellationError`, at once.
    @Test func aCancelledConnectThrowsCancellationError() async throws {
        let session = try await RemoteSession(sessionID: "kit-errors", displayName: "Ada", discovery: false)
        // Bound and never read: the hello is swallowed, no answer and no ICMP error comes back.
        let silent = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let port = try silent.localAddress().port
        let attempt = Task { try await session.connect(to: "127.0.0.1:\(port)", timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        attempt.cancel()
        let result = await attempt.result
        let took = ContinuousClock.now - started
        print("cancelled connect returned after \(took)")
        #expect(throws: CancellationError.self) { try result.get() }
        silent.close()
        await session.close()
    }

    /// A hello to a port nothing listens on fails with `.peerUnreachable` as soon as the host's
    /// ICMP "port unreachable" arrives. The error code is the proof (a hello that went unanswered
    /// would end in `.timedOut` after 10 s); the time is printed, not judged, since a loaded
    /// machine may take seconds to run the test's own tasks.
    @Test func aClosedPortFailsFast() async throws {
        let session = try await RemoteSession(sessionID: "kit-errors", displayName: "Ada", discovery: false)
        let address = try Self.closedPort()
        let started = ContinuousClock.now
        do {
            _ = try await session.connect(to: address, timeout: .seconds(10))
            Issue.record("connected to a closed port")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .peerUnreachable, "\(error)")
        }
        let took = ContinuousClock.now - started
        print("connect to a closed port failed after \(took)")
        await session.close()

        // A controller, whose socket is connected to the receiver's address, too.
        let controllerAddress = try Self.closedPort()
        let controllerStarted = ContinuousClock.now
        do {
            _ = try await RobotController(.address(controllerAddress), displayName: "nobody-home", timeout: .seconds(10))
            Issue.record("a controller connected to a closed port")
        } catch let error as AnalogRemoteError {
            #expect(error.code == .peerUnreachable, "\(error)")
        }
        let controllerTook = ContinuousClock.now - controllerStarted
        print("controller to a closed port failed after \(controllerTook)")
    }

    /// An address where nothing listens: a port the kernel just gave out and took back, on a
    /// loopback address of its own (127.x.y.z, not 127.0.0.1), so a test running beside this one
    /// that binds an ephemeral port on 127.0.0.1 cannot be handed the same address in between.
    static func closedPort() throws -> String {
        let host = "127.\(Int.random(in: 1...254)).\(Int.random(in: 1...254)).\(Int.random(in: 1...254))"
        let probe = try UDPSocket.bind(port: 0, host: host)
        let port = try probe.localAddress().port
        probe.close()
        return "\(host):\(port)"
    }

    /// Messages name no command-line flag, and say "an unreliable".
    @Test func messagesReadRight() async throws {
        do {
            _ = try await RemoteSession(sessionID: "", displayName: "Ada", discovery: false)
            Issue.record("an empty session ID was taken")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(!error.description.contains("--"), "\(error)")
            #expect(error.description.contains("sessionID"), "\(error)")
        }
        let session = try await RemoteSession(sessionID: "kit-errors", displayName: "Ada", discovery: false)
        do {
            try session.send(Data(count: RemoteSession.unreliableLimit + 1), mode: .unreliable)
            Issue.record("an oversized datagram was taken")
        } catch {
            #expect(error.code == .dataTooBig)
            #expect(error.description.contains("an unreliable message"), "\(error)")
        }
        await session.close()
    }
}
