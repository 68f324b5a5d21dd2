// docs/swift-api.md
import AnalogRemoteKit
import Foundation
import Logging

func snippet4() async throws {

    var logger = Logger(label: "my-game")
    logger.logLevel = .debug                       // peer changes are .debug; problems .warning
    let session = try await RemoteSession(sessionID: "class-7b", displayName: "Ada", logger: logger)
    print("listening on udp port", session.port)
}
