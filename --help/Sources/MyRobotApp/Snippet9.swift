// Sources/AnalogRemoteKit/RobotReceiver.swift
import AnalogRemoteKit
import Foundation

func snippet9() async throws {
    let receiver = try await RobotReceiver(name: "wheelie", port: 27183)
    for await output in receiver.outputs {
        print(output.leftMotor, output.rightMotor)   // set your motors here
    }
}
