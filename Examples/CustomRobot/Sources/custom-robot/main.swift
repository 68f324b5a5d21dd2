// custom-robot: a receiver for a robot that is not the kit — a simulated differential drive
// whose pose is printed in the terminal. Drive it with `analog-remote control --peer HOST:PORT`.
//
//   custom-robot [--name NAME] [--port N] [--no-advertise] [--seconds S]
import AnalogRemoteKit
import Foundation

var name = "custom-robot", port: UInt16 = 27183, advertise = true, seconds: Double?
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--name": name = arguments.popFirst() ?? name
    case "--port": port = UInt16(arguments.popFirst() ?? "") ?? port
    case "--no-advertise": advertise = false
    case "--seconds": seconds = Double(arguments.popFirst() ?? "")
    default:
        FileHandle.standardError.write(Data("custom-robot: unknown option \(flag)\n".utf8))
        exit(64)
    }
}

/// One line on stdout, written at once (a test reads it while the program runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Two wheels 0.2 m apart; a motor value of 127 turns its wheel at 0.5 m/s.
struct DifferentialDrive {
    var x = 0.0, y = 0.0, heading = 0.0
    static let track = 0.2, topSpeed = 0.5

    mutating func advance(left: Int, right: Int, by dt: Double) {
        let vl = Double(left) / 127 * Self.topSpeed, vr = Double(right) / 127 * Self.topSpeed
        let v = (vl + vr) / 2, w = (vr - vl) / Self.track
        x += v * cos(heading) * dt
        y += v * sin(heading) * dt
        heading += w * dt
    }

    var line: String {
        String(format: "x %+.2f m  y %+.2f m  heading %+4.0f°", x, y, heading * 180 / .pi)
    }
}

/// The robot's pose and the command it is under; the outputs and the ticker take turns.
actor Drive {
    var robot = DifferentialDrive()
    var output = RobotOutput.rest
    var last = ContinuousClock.now

    /// Integrates up to now under the command in force.
    private func advance() {
        let now = ContinuousClock.now
        let held = now - last
        robot.advance(left: output.leftMotor, right: output.rightMotor,
                      by: Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18)
        last = now
    }

    func apply(_ next: RobotOutput) -> String {
        advance()
        output = next
        let command = next.isSafeState ? "safe state" : "left \(next.leftMotor) right \(next.rightMotor) lights \(next.lights)"
        return "command: \(command)"
    }

    func tick() -> String {
        advance()
        return robot.line
    }
}

do {
    let receiver = try await RobotReceiver(name: name, port: port, advertise: advertise)
    say("custom-robot \(name) receiving on udp port \(receiver.port)")
    if let seconds {
        Task {
            try await Task.sleep(for: .seconds(seconds))
            await receiver.close()
        }
    }
    let drive = Drive()
    // The pose moves on while a command holds: print it five times a second.
    let ticker = Task {
        while !Task.isCancelled {
            try await Task.sleep(for: .milliseconds(200))
            say(await drive.tick())
        }
    }
    for await output in receiver.outputs {
        say(await drive.apply(output))
    }
    ticker.cancel()
    say("custom-robot: stopped")
} catch {
    FileHandle.standardError.write(Data("custom-robot: \(error)\n".utf8))
    exit(1)
}
