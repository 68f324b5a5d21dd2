import ControlWire
import Foundation
import RemoteWire
import TestSupport
import Testing
@testable import WebServer

/// What one open dashboard is sent (``TeacherPush``): everything first, then only what changed,
/// and nothing while nothing changes; read back as the page reads it (JSON.parse, here
/// Foundation's parser).
struct TeacherPushTests {
    static let epoch = ContinuousClock.now

    static func at(_ ms: Int) -> ContinuousClock.Instant { epoch + .milliseconds(ms) }

    static func parse(_ text: String?) throws -> [String: Any] {
        let text = try #require(text, "nothing was pushed")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any], "\(text)")
    }

    static func ids(_ message: [String: Any]) -> [String] {
        ((message["rows"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
    }

    /// A robot heard at `heard` ms, driven by `driver`.
    static func row(_ n: Int, heard: Int = 0, driver: String = "Ann", uptime: UInt32 = 60) -> TeacherLink.Row {
        var row = TeacherLink.Row(id: "i\(n)", label: "robot \(n)", address: "127.0.0.1:\(4000 + n)")
        row.name = "robot \(n)"
        row.heard = at(heard)
        row.report = WatchReport(serial: 1, uptimeSeconds: uptime, state: driver.isEmpty ? .free : .driving, robotID: 0x1234,
                                 rttMeanMillis: 3, rttMaxMillis: 7, lossPerMille: 3, statesPerSecond: 50, name: "robot \(n)",
                                 driver: WireText(driver), board: "motors profile", transport: "sim", version: "1.0")
        return row
    }

    static func next(_ push: inout TeacherPush, _ rows: [TeacherLink.Row], now ms: Int, dropped: Int = 0,
                     game: TeacherGame.Board? = TeacherGame.Board()) -> String? {
        push.next(rows, now: at(ms), roster: nil, missing: [], game: game, dropped: dropped, watchingSince: epoch)
    }

    @Test func firstEverythingThenNothingWhileNothingChanges() throws {
        var push = TeacherPush(epoch: Self.epoch)
        let rows = [Self.row(10), Self.row(2), Self.row(1)]
        let first = try Self.parse(Self.next(&push, rows, now: 250))
        #expect(first["t"] as? String == "rows" && first["now"] as? Int == 250)
        #expect(first["order"] as? [String] == ["i1", "i2", "i10"], "natural order: \(first)")
        #expect(Self.ids(first) == ["i1", "i2", "i10"])
        #expect(first["dropped"] as? Int == 0 && first["game"] != nil)
        // The same rows a quarter of a second later: ages moved, nothing else, so nothing is pushed.
        #expect(Self.next(&push, rows, now: 500) == nil)
        #expect(Self.next(&push, rows, now: 750) == nil)
    }

    @Test func onlyTheRowThatChangedAndTheOrderWhenItChanged() throws {
        var push = TeacherPush(epoch: Self.epoch)
        var rows = [Self.row(1), Self.row(2), Self.row(3)]
        _ = try Self.parse(Self.next(&push, rows, now: 250))
        rows[1] = Self.row(2, heard: 400, driver: "")
        let changed = try Self.parse(Self.next(&push, rows, now: 500))
        #expect(Self.ids(changed) == ["i2"] && changed["order"] == nil && changed["dropped"] == nil && changed["game"] == nil,
                "\(changed)")
        let shown = try #require((changed["rows"] as? [[String: Any]])?.first)
        #expect(shown["state"] as? String == "free" && shown["driver"] as? String == "" && shown["heard"] as? Int == 400)
        // A robot comes: the new order and its row only. One goes: the new order and no row.
        rows.append(Self.row(4))
        let added = try Self.parse(Self.next(&push, rows, now: 750))
        #expect(added["order"] as? [String] == ["i1", "i2", "i3", "i4"] && Self.ids(added) == ["i4"], "\(added)")
        rows.remove(at: 0)
        let removed = try Self.parse(Self.next(&push, rows, now: 1000))
        #expect(removed["order"] as? [String] == ["i2", "i3", "i4"] && Self.ids(removed).isEmpty, "\(removed)")
        // Back again: its row is sent whole, as to a page that has forgotten it.
        rows.append(Self.row(1))
        let back = try Self.parse(Self.next(&push, rows, now: 1250))
        #expect(back["order"] as? [String] == ["i1", "i2", "i3", "i4"] && Self.ids(back) == ["i1"], "\(back)")
        // The counts and the game are pushed when they change.
        let dropped = try Self.parse(Self.next(&push, rows, now: 1500, dropped: 3))
        #expect(dropped["dropped"] as? Int == 3 && Self.ids(dropped).isEmpty)
        var board = TeacherGame.Board()
        board.playing = true
        let game = try Self.parse(Self.next(&push, rows, now: 1750, dropped: 3, game: board))
        #expect((game["game"] as? [String: Any])?["playing"] as? Bool == true && game["dropped"] == nil)
    }

    @Test func aSilentRobotTurnsOfflineInAPushOfItsOwn() throws {
        var push = TeacherPush(epoch: Self.epoch)
        let rows = [Self.row(1, heard: 100), Self.row(2, heard: 1_900)]
        let first = try Self.parse(Self.next(&push, rows, now: 2_000))
        #expect((first["rows"] as? [[String: Any]])?.allSatisfy { $0["offline"] as? Bool == false } == true, "\(first)")
        #expect(Self.next(&push, rows, now: 2_050) == nil)
        // Robot 1 has been silent for more than 2 s: its row (and only its) says so.
        let silent = try Self.parse(Self.next(&push, rows, now: 2_150))
        let row = try #require((silent["rows"] as? [[String: Any]])?.first)
        #expect(Self.ids(silent) == ["i1"] && row["offline"] as? Bool == true && row["heard"] as? Int == 100, "\(silent)")
    }

    @Test func theDashboardLooksWhenTheNextRowTurnsOffline() {
        // Robot 1 last heard at 100 ms, robot 2 at 1,900 ms: robot 1 turns OFFLINE just after
        // 2,100 ms, robot 2 just after 3,900 ms. A look (a push) is due then, not a period later.
        let rows = [Self.row(1, heard: 100), Self.row(2, heard: 1_900)]
        #expect(TeacherRows.nextOffline(rows, now: Self.at(2_000), watchingSince: nil) == Self.at(2_101))
        #expect(TeacherRows.nextOffline(rows, now: Self.at(2_101), watchingSince: nil) == Self.at(3_901))
        #expect(TeacherRows.nextOffline(rows, now: Self.at(3_901), watchingSince: nil) == nil)
        // The silence before the robots were asked does not count: watched since 5 s.
        #expect(TeacherRows.nextOffline(rows, now: Self.at(5_000), watchingSince: Self.at(5_000)) == Self.at(7_001))
        // A row kept after DNS-SD removed its robot (a killed receiver) turns OFFLINE on time too.
        var gone = Self.row(3, heard: 1_000)
        gone.gone = true
        #expect(TeacherRows.nextOffline([gone], now: Self.at(1_500), watchingSince: nil) == Self.at(3_001))
    }

    @Test func everyFieldThePageReadsSurvivesAnyText() throws {
        let nasty = "Zoë \"the\" \\ driver\n\t\u{1}\u{7F} 🤖 </script>"
        var row = Self.row(1, heard: 1_500, driver: nasty)
        row.refusal = WireText(nasty)
        row.stop = "refused: " + nasty
        row.unverified = nasty
        row.off = nasty
        row.keyless = true
        row.gone = true
        row.sent = ("stop", Self.at(1_200))
        row.report?.state = .failsafe(.silence)
        row.report?.lockedTo = WireText(nasty)
        row.report?.lossPerMille = 125
        row.report?.flags = WatchReport.identifyingFlag
        let roster = Roster(entries: [.init(student: nasty, robot: "robot 1")])
        var push = TeacherPush(epoch: Self.epoch)
        let text = push.next([row], now: Self.at(2_000), roster: roster, missing: [nasty], game: nil, dropped: 7, watchingSince: nil)
        let message = try Self.parse(text)
        let shown = try #require((message["rows"] as? [[String: Any]])?.first)
        // What came from the wire (driver, refusal, lock) is a WireText: shown escaped, exactly as decoded.
        let wire = WireText(nasty).text
        #expect(wire != nasty && !wire.contains("\n") && wire.contains("</script>"))
        #expect(shown["driver"] as? String == wire && shown["refusal"] as? String == wire && shown["stop"] as? String == "refused: " + nasty)
        #expect(shown["unverified"] as? String == nasty && shown["off"] as? String == nasty && shown["locked"] as? String == wire)
        #expect(shown["students"] as? [String] == [nasty] && message["missing"] as? [String] == [nasty])
        #expect(shown["keyless"] as? Bool == true && shown["gone"] as? Bool == true && shown["identifying"] as? Bool == true)
        #expect(shown["sent"] as? String == "stop" && shown["sentAt"] as? Int == 1_200 && shown["heard"] as? Int == 1_500)
        #expect(shown["state"] as? String == "failsafe" && shown["cause"] as? String == "silence")
        #expect(shown["loss"] as? Double == 12.5 && shown["rttMean"] as? Int == 3 && shown["rttMax"] as? Int == 7)
        #expect(shown["sps"] as? Int == 50 && shown["uptime"] as? Int == 60 && shown["robotId"] as? String != nil)
        #expect(shown["offline"] as? Bool == false && message["dropped"] as? Int == 7 && message["game"] == nil)
        #expect(text?.contains("</script>") == true, "a JSON string, not HTML: nothing else to escape")
    }

    /// A row whose report carries the sensor block has `sensors` with the board's values, as the
    /// tile reads them; a row whose report has none has no `sensors` key. The report is the
    /// §7.12 vector with sensors (12 0 255 40, switch pressed, 21 °C, 45 %RH).
    @Test func aReportsSensorBlockIsTheRowsSensors() throws {
        let data = try Data(contentsOf: Paths.repositoryFile("vectors/teacher-messages.json"))
        let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let messages = try #require(file["messages"] as? [[String: Any]])
        let hex = try #require(messages.first { ($0["sensors"] as? [Int]) != nil }?["hex"] as? String)
        let d = try ControlDatagram.decode(try #require(Hex.bytes(hex)))
        guard case .watchReport(let report) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            Issue.record("not a report"); return
        }
        var with = Self.row(1)
        with.report = report
        let without = Self.row(2)
        var push = TeacherPush(epoch: Self.epoch)
        let message = try Self.parse(Self.next(&push, [with, without], now: 250))
        let rows = try #require(message["rows"] as? [[String: Any]])
        let shown = try #require(rows.first { $0["id"] as? String == "i1" }?["sensors"] as? [String: Any])
        #expect(shown.compactMapValues { $0 as? Int } == ["sensor1": 12, "sensor2": 0, "sensor3": 255, "sensor4": 40, "switch": 1,
                                                          "temperature": 21, "humidity": 45], "\(shown)")
        #expect(rows.first { $0["id"] as? String == "i2" }?["sensors"] == nil, "a report without a block shows no sensors")
    }
}
