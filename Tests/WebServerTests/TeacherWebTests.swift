import Foundation
import Hummingbird
import Testing
@testable import WebServer

/// The dashboard's pieces that need no network: the login, the key file, the roster, the form.
struct TeacherWebTests {
    @Test func loginGivesAStrictCookieAndIsRateLimited() throws {
        let auth = TeacherAuth(key: "maple tree")
        let t = ContinuousClock.now
        #expect(auth.login(key: "maple", now: t) == .wrong)
        guard case .ok(let token) = auth.login(key: "maple tree", now: t) else { Issue.record("right key refused"); return }
        #expect(token.count == 64)
        let cookie = auth.setCookie(token)
        for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/teacher"] { #expect(cookie.contains(attribute)) }
        var fields = HTTPFields()
        fields[.cookie] = "other=1; \(TeacherAuth.cookie)=\(token)"
        #expect(auth.admits(fields, now: t))
        fields[.cookie] = "\(TeacherAuth.cookie)=\(String(repeating: "0", count: 64))"
        #expect(!auth.admits(fields, now: t), "a forged token")
        fields[.cookie] = "\(TeacherAuth.cookie)=\(token)"
        #expect(!auth.admits(fields, now: t + TeacherAuth.lifetime + .seconds(1)), "an expired session")
        // A burst of guesses: throttled, and then even the right key waits.
        var results: [TeacherAuth.Login] = []
        for _ in 0..<12 { results.append(auth.login(key: "guess", now: t)) }
        #expect(results.contains(.throttled))
        #expect(auth.login(key: "maple tree", now: t) == .throttled)
        if case .ok = auth.login(key: "maple tree", now: t + .seconds(3)) {} else { Issue.record("no login after the pause") }
        #expect(auth.failed >= 9)
    }

    /// Logout ends the session on the server (what every open dashboard socket checks before it
    /// obeys a message); another login's session stays.
    @Test func logoutEndsThatSessionOnlyAndOnTheServer() throws {
        let auth = TeacherAuth(key: "maple tree")
        guard case .ok(let laptop) = auth.login(key: "maple tree", from: "10.0.0.1"),
              case .ok(let phone) = auth.login(key: "maple tree", from: "10.0.0.2") else { Issue.record("login refused"); return }
        var fields = HTTPFields()
        fields[.cookie] = "\(TeacherAuth.cookie)=\(laptop)"
        #expect(auth.isLive(laptop) && auth.isLive(phone))
        #expect(auth.logout(fields))
        #expect(!auth.isLive(laptop) && !auth.admits(fields), "the session survived its logout")
        #expect(auth.isLive(phone), "a logout ended another login's session")
        #expect(!auth.logout(fields), "a second logout found a session")
    }

    /// Issue 25: the limit is per client address first, so a student hammering the form from
    /// their laptop does not lock the teacher out; many addresses together still meet the
    /// limit for everyone.
    @Test func loginIsRateLimitedPerClientAddress() {
        let auth = TeacherAuth(key: "maple tree")
        let t = ContinuousClock.now
        let guesses = (0..<12).map { _ in auth.login(key: "guess", from: "10.0.0.66", now: t) }
        #expect(guesses.prefix(10).allSatisfy { $0 == .wrong } && guesses.suffix(2).allSatisfy { $0 == .throttled })
        if case .ok = auth.login(key: "maple tree", from: "10.0.0.1", now: t) {} else { Issue.record("the teacher's address was throttled too") }
        #expect(auth.login(key: "maple tree", from: "10.0.0.66", now: t) == .throttled)
        // Forty guessers at once, ten tries each: the server-wide burst (40) ends it for everyone.
        let crowd = (0..<40).flatMap { i in (0..<10).map { _ in auth.login(key: "guess", from: "10.0.1.\(i)", now: t) } }
        #expect(crowd.filter { $0 == .wrong }.count <= 40)
        #expect(auth.login(key: "maple tree", from: "10.0.0.2", now: t) == .throttled)
    }

    /// A page (or script) that retries a refused WebSocket in a loop writes one log line per
    /// address every 10 s, and the next line says how many went unlogged.
    @Test func refusedWebSocketsAreLoggedOncePerAddressPerTenSeconds() {
        let notices = RefusalNotices()
        let t = ContinuousClock.now
        #expect(notices.allow("10.0.0.66", now: t) == 0)
        for i in 1...50 { #expect(notices.allow("10.0.0.66", now: t + .milliseconds(i)) == nil) }
        #expect(notices.allow("10.0.0.1", now: t) == 0, "another address has its own line")
        #expect(notices.allow("10.0.0.66", now: t + .seconds(10)) == 50)
        #expect(notices.allow("10.0.0.66", now: t + .seconds(11)) == nil)
    }

    @Test func keyFile() throws {
        let path = NSTemporaryDirectory() + "ar-key-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "maple tree 42\n".write(toFile: path, atomically: true, encoding: .utf8)
        // Readable by others (docs/security.md): refused, as for receive and stop-all.
        #expect(throws: WebServerError.self) { try TeacherKeyFile.read(path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try TeacherKeyFile.read(path) == "maple tree 42")
        try "\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: WebServerError.self) { try TeacherKeyFile.read(path) }
        #expect(throws: WebServerError.self) { try TeacherKeyFile.read(path + "-missing") }
    }

    @Test func rosterFromCSVAndTOML() throws {
        let csv = try Roster.csv("student,robot\n# class 3b\nAnn, robot 1\n\"Ben\",robot 2\nCy,robot 1\n", file: "r.csv")
        #expect(csv.entries.map(\.student) == ["Ann", "Ben", "Cy"] && csv.students(of: "robot 1") == ["Ann", "Cy"])
        let toml = try Roster.toml("[roster]\nAnn = \"robot 1\"\n\"Ben B\" = \"robot 2\"\n", file: "r.toml")
        #expect(toml.students(of: "robot 2") == ["Ben B"])
        #expect(throws: RosterError.self) { try Roster.csv("Ann\n", file: "r.csv") }
        #expect(throws: RosterError.self) { try Roster.csv("Ann,robot 1\nAnn,robot 2\n", file: "r.csv") }
        #expect(throws: RosterError.self) { try Roster.toml("[other]\nx = 1\n", file: "r.toml") }
        #expect(throws: RosterError.self) { try Roster.toml("[roster]\nAnn = 3\n", file: "r.toml") }
        #expect(throws: RosterError.self) { try Roster.toml("[+]\n", file: "r.toml") }
    }

    @Test func loginForm() {
        #expect(TeacherDashboard.formValue("key", in: "key=maple+tree+%2542") == "maple tree %42")
        #expect(TeacherDashboard.formValue("key", in: "a=1&key=") == "")
        #expect(TeacherDashboard.formValue("key", in: "a=1") == nil)
        #expect(TeacherAssets.escape("<b>\"&") == "&lt;b&gt;&quot;&amp;")
    }
}
