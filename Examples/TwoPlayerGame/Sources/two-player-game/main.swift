// two-player-game: rock, paper, scissors between two programs over a RemoteSession.
//
//   two-player-game --host [--port N] --name Ada [--move rock] [--rounds 1]
//   two-player-game --join HOST:PORT --name Bob [--move paper]
//
// The host waits for one player; each round both send their move reliably, and each side
// prints the same verdict. Without --move a move is drawn at random.
import AnalogRemoteKit
import Foundation

let moves = ["rock", "paper", "scissors"]
var host = false, join: String?, name = "player", port: UInt16 = 0, fixedMove: String?, rounds = 1
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--host": host = true
    case "--join": join = arguments.popFirst()
    case "--name": name = arguments.popFirst() ?? name
    case "--port": port = UInt16(arguments.popFirst() ?? "") ?? 0
    case "--move": fixedMove = arguments.popFirst()
    case "--rounds": rounds = Int(arguments.popFirst() ?? "") ?? 1
    default: fail("unknown option \(flag)", status: 64)
    }
}
guard host != (join != nil) else { fail("give --host or --join HOST:PORT", status: 64) }
if let fixedMove, !moves.contains(fixedMove) { fail("--move \(fixedMove): give rock, paper or scissors", status: 64) }

func fail(_ text: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("two-player-game: \(text)\n".utf8))
    exit(status)
}

/// One line on stdout, written at once (a test reads it while the program runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// 0: a draw, 1: `mine` wins, -1: `theirs` wins.
func judge(_ mine: String, _ theirs: String) -> Int {
    guard let a = moves.firstIndex(of: mine), let b = moves.firstIndex(of: theirs), a != b else { return 0 }
    return (a - b + 3) % 3 == 1 ? 1 : -1
}

do {
    let session = try await RemoteSession(sessionID: "rock-paper-scissors", displayName: name, port: port)
    let inbox = session.messages
    let opponent: RemoteSession.Peer
    if let join {
        opponent = try await session.connect(to: join)
    } else {
        say("hosting on udp port \(session.port)")
        var found: RemoteSession.Peer?
        for await change in session.peerChanges where change.state == .connected {
            found = change.peer
            break
        }
        guard let found else { fail("the session closed before anyone joined", status: 1) }
        opponent = found
    }
    say("\(name) plays \(opponent.displayName)")
    var messages = inbox.makeAsyncIterator()
    var score = (mine: 0, theirs: 0)
    for round in 1...max(1, rounds) {
        let move = fixedMove ?? moves.randomElement()!
        try session.send(Data(move.utf8), to: [opponent], mode: .reliable)
        guard let message = await messages.next() else { fail("\(opponent.displayName) left", status: 1) }
        let theirs = String(decoding: message.data, as: UTF8.self)
        let verdict = judge(move, theirs)
        if verdict > 0 { score.mine += 1 } else if verdict < 0 { score.theirs += 1 }
        let winner = verdict == 0 ? "draw" : verdict > 0 ? "\(name) wins" : "\(opponent.displayName) wins"
        say("round \(round): \(name) \(move), \(opponent.displayName) \(theirs): \(winner)")
    }
    say("final: \(name) \(score.mine), \(opponent.displayName) \(score.theirs)")
    // The last move must be acknowledged before leaving: close() waits for that.
    await session.close()
} catch {
    fail("\(error)", status: 1)
}
