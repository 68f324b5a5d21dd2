// docs/swift-api.md
import AnalogRemoteKit
import Foundation

func snippet3() async throws {
    let session = try await RemoteSession(sessionID: "class-7b", displayName: "Ada")   // port: 0 = any
    for await change in session.peerChanges where change.state == .available {        // found by DNS-SD
        let peer = try await session.connect(to: change.peer)                          // by its peer id
        try session.send(Data("hello".utf8), to: [peer], mode: .reliable)   // ≤ 64 KiB, in order, once
        break
    }
    let bob = try await session.connect(to: "192.168.1.20:40001")       // or by address
    try session.send(Data([1, 2, 3]), to: [bob], mode: .unreliable)     // ≤ 943 bytes, best effort
    for await message in session.messages {                             // everything since the start
        print(message.peer.displayName, message.mode, message.data.count)
        if message.data == Data("bye".utf8) { break }
    }
    await session.close()
}
