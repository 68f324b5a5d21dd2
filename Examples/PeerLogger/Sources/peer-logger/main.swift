// peer-logger: joins a session and prints every peer's state change and every message.
//
//   peer-logger [--session ID] [--name NAME] [--port N] [--connect HOST:PORT]… [--connect-found]
//               [--seconds S]
//
// Peers of the session announced on the LAN (DNS-SD: receivers and other programs' sessions)
// are logged as they come and go; --connect-found connects to each one found. Connects to each
// --connect address too (a receiver, or another program's RemoteSession), then logs until S
// seconds have passed (default: until Ctrl-C). One line per event:
//   available robot-7 (3f2a…)   connected robot-7 (3f2a…)   message from Ada (…): 5 bytes, reliable
import AnalogRemoteKit
import Foundation

var session = "AnalogRemote", name = "peer-logger", port: UInt16 = 0, seconds: Double?
var addresses: [String] = []
var connectFound = false
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    if flag == "--connect-found" {
        connectFound = true
        continue
    }
    let value = arguments.popFirst() ?? ""
    switch flag {
    case "--session": session = value
    case "--name": name = value
    case "--port": port = UInt16(value) ?? 0
    case "--connect": addresses.append(value)
    case "--seconds": seconds = Double(value)
    default:
        FileHandle.standardError.write(Data("peer-logger: unknown option \(flag)\n".utf8))
        exit(64)
    }
}

/// One line on stdout, written at once (a test reads it while the program runs).
func log(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let remote = try await RemoteSession(sessionID: session, displayName: name, port: port)
    log("listening on udp port \(remote.port) in session \(session) as \(remote.localPeer)")
    switch remote.discoveryState {
    case .active: log("finding peers by DNS-SD")
    case .unavailable(let why): log("not finding peers by DNS-SD: \(why)")
    case .off: break
    }
    let changes = Task {
        for await change in remote.peerChanges {
            log("\(change.state) \(change.peer)")
            if connectFound, change.state == .available {
                Task {
                    do {
                        _ = try await remote.connect(to: change.peer)
                    } catch {
                        log("cannot connect to \(change.peer): \(error)")
                    }
                }
            }
        }
    }
    let messages = Task {
        for await message in remote.messages {
            log("message from \(message.peer): \(message.data.count) bytes, \(message.mode)")
        }
    }
    for address in addresses {
        do {
            _ = try await remote.connect(to: address)
        } catch {
            log("cannot connect to \(address): \(error)")
        }
    }
    if let seconds {
        try await Task.sleep(for: .seconds(seconds))
    } else {
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
    await remote.close()
    _ = await (changes.value, messages.value)
} catch {
    FileHandle.standardError.write(Data("peer-logger: \(error)\n".utf8))
    exit(1)
}
