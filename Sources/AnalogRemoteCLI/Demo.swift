import ArgumentParser
import Console
import RemoteWire
import SystemIO

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a controller, a receiver and a simulated board on this machine and show the robot moving (no hardware needed).")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReporting {
            _ = global.bootstrap()
            let receiver = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            let address = try receiver.localAddress()
            let sender = try UDPSocket.sender(for: address)
            let states: [ControllerState] = [
                .init(angle: 0, buttons: .forward),
                .init(angle: 0.4, buttons: .forward),
                .init(angle: -0.4, buttons: [.backward, .a]),
                .neutral,
            ]
            var buffer = [UInt8](repeating: 0, count: 1500)
            for state in states {
                let bytes = StatePacket.encode(state)
                try sender.send(bytes, to: address)
                guard let (n, _) = try receiver.receive(into: &buffer, timeout: .seconds(1)) else {
                    throw UserFacingError("demo: no datagram came back over loopback", status: .networkUnavailable)
                }
                let decoded = try StatePacket.decode(buffer[..<n])
                print("sent \(state)  wire \(Hex.string(bytes))  received \(decoded)")
            }
            return .success
        }
    }
}
