// Sources/AnalogRemoteKit/RemoteSession.swift
import AnalogRemoteKit
import Foundation

func snippet7() async throws {
    let session = try await RemoteSession(sessionID: "class-7b", displayName: "Ada")
    let bob = try await session.connect(to: "192.168.1.20:40001")
    try session.send(Data("hello".utf8), to: [bob])
    for await message in session.messages { print(message.peer.displayName, message.data) }
}
