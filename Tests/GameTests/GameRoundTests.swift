import Game
import Testing

@Suite struct GameRoundTests {
    @Test func countsPressesNotHolds() {
        var g = GameRound()
        let t = ContinuousClock.now
        guard case .joined(let ann) = g.join(name: "Ann", now: t), case .joined(let bob) = g.join(name: "Bob", now: t) else {
            Issue.record("join failed"); return
        }
        for pressed in [true, true, true, false, true, false, false, true] { g.button(pressed, player: ann) }
        g.button(true, player: bob)
        #expect(g.players[ann].points == 3)
        #expect(g.players[bob].points == 1)
        #expect(g.rank(of: ann) == 1 && g.rank(of: bob) == 2)
    }

    @Test func tiesShareARankAndNamesAreMadeUnique() {
        var g = GameRound()
        let t = ContinuousClock.now
        for _ in 0..<3 { _ = g.join(name: "Ann", now: t) }
        #expect(g.players.map(\.name) == ["Ann", "Ann #2", "Ann #3"])
        g.button(true, player: 1)
        g.button(true, player: 2)
        #expect(g.standings.map(\.rank) == [1, 1, 3])
    }

    @Test func atMost64Players() {
        var g = GameRound()
        for i in 0..<64 {
            let r = g.join(name: "p\(i)", now: .now)
            #expect(r == .joined(i))
        }
        let late = g.join(name: "late", now: .now)
        #expect(late == .full)
    }

    @Test func resultsAsCSVAndJSON() {
        var g = GameRound()
        _ = g.join(name: "Ann, \"the fast\"", now: .now)
        _ = g.join(name: "ボブ", now: .now)
        g.button(true, player: 1)
        #expect(g.csv() == "rank,name,points\r\n1,ボブ,1\r\n2,\"Ann, \"\"the fast\"\"\",0\r\n")
        #expect(g.json() == "{\"players\":[{\"rank\":1,\"name\":\"ボブ\",\"points\":1},{\"rank\":2,\"name\":\"Ann, \\\"the fast\\\"\",\"points\":0}]}\n")
    }

    /// A name a spreadsheet would run as a formula (CSV injection) is a text cell in the CSV.
    @Test(arguments: [("=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""), ("+1", "'+1"), ("-2", "'-2"),
                      ("@SUM(A1)", "'@SUM(A1)"), ("Ann", "Ann")])
    func formulaCellsAreNeutralised(name: String, cell: String) {
        var g = GameRound()
        _ = g.join(name: name, now: .now)
        #expect(g.csv() == "rank,name,points\r\n1,\(cell),0\r\n")
    }
}
