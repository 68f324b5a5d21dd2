// Sources/AnalogRemoteKit/RobotController.swift
import AnalogRemoteKit
import Foundation

func snippet8() async throws {
    let robot = try await RobotController(.address("robot.local:27183"), displayName: "Ada")
    robot.send(tilt: 0, buttons: .forward)
}
