import ControlPlane
import Crypto
import Foundation
import Hummingbird
import Synchronization
import SystemIO

/// Who may see `/teacher`: the teacher key typed into a login form, then a session cookie
/// (`HttpOnly; Secure; SameSite=Strict`, no `Secure` on `--plain-http`; 256 random bits, 12 hours). Attempts are rate limited
/// per client address (a burst of 10, then one every 2 s: a key of a few words is out of reach,
/// and a student who hammers the form slows only their own address) and for everyone together
/// (a burst of 40, then 2 a second: many addresses guess no faster). Wrong attempts are counted
/// and logged.
final class TeacherAuth: Sendable {
    enum Login: Equatable { case ok(token: String), wrong, throttled }

    static let cookie = "ar_teacher"
    static let lifetime: Duration = .seconds(12 * 3600)
    static let maxSessions = 64

    private struct State {
        var sessions: [String: ContinuousClock.Instant] = [:]
        /// Per client address; past ``TeacherAuth/maxAddresses`` the full buckets are forgotten.
        var perAddress: [String: TokenBucket] = [:]
        var everyone = TokenBucket(rate: 2, burst: 40)
        var failed = 0
    }

    static let maxAddresses = 1024

    private let digest: [UInt8]
    private let state = Mutex(State())

    /// False on `--plain-http`: a browser drops a `Secure` cookie that came over plain HTTP
    /// (from anywhere but localhost), so the teacher could never log in from another machine.
    let secureCookie: Bool

    init(key: String, secureCookie: Bool = true) {
        digest = Self.hash(key)
        self.secureCookie = secureCookie
    }

    private static func hash(_ s: String) -> [UInt8] { Array(SHA256.hash(data: Array(s.utf8))) }

    var failed: Int { state.withLock { $0.failed } }

    /// `client`: the address the attempt came from ("" when unknown).
    func login(key: String, from client: String = "", now: ContinuousClock.Instant = .now) -> Login {
        state.withLock { s in
            if s.perAddress[client] == nil, s.perAddress.count >= Self.maxAddresses {
                s.perAddress = s.perAddress.filter { var b = $0.value; return b.peek(now: now) < b.burst }
                if s.perAddress.count >= Self.maxAddresses { return .throttled }
            }
            var bucket = s.perAddress[client] ?? TokenBucket(rate: 0.5, burst: 10)
            let mine = bucket.take(now: now)
            s.perAddress[client] = bucket
            guard mine, s.everyone.take(now: now) else { return .throttled }
            let typed = Self.hash(key)
            var diff: UInt8 = 0
            for i in 0..<digest.count { diff |= digest[i] ^ typed[i] }
            guard diff == 0 else { s.failed += 1; return .wrong }
            s.sessions = s.sessions.filter { $0.value > now }
            if s.sessions.count >= Self.maxSessions, let oldest = s.sessions.min(by: { $0.value < $1.value }) {
                s.sessions.removeValue(forKey: oldest.key)
            }
            var rng = SystemRandomNumberGenerator()
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &rng)) }.joined()
            s.sessions[token] = now + Self.lifetime
            return .ok(token: token)
        }
    }

    /// Does the request carry a live session cookie?
    func admits(_ fields: HTTPFields, now: ContinuousClock.Instant = .now) -> Bool {
        guard let token = Self.token(in: fields) else { return false }
        return isLive(token, now: now)
    }

    /// Is the session of `token` still on? The dashboard's WebSocket asks before it obeys any
    /// message, so a socket opened before a logout does nothing after it.
    func isLive(_ token: String, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in s.sessions[token].map { $0 > now } ?? false }
    }

    /// When the session of `token` ends unless logged out before (nil: it is not on).
    func expiry(_ token: String) -> ContinuousClock.Instant? {
        state.withLock { $0.sessions[token] }
    }

    /// Ends the request's session (true if there was one). Sessions live in this process only:
    /// a restart of the server ends every one of them. A login does not end the other
    /// sessions (the teacher may have the dashboard open on a laptop and a phone at once).
    @discardableResult
    func logout(_ fields: HTTPFields) -> Bool {
        guard let token = Self.token(in: fields) else { return false }
        return state.withLock { $0.sessions.removeValue(forKey: token) } != nil
    }


    static func token(in fields: HTTPFields) -> String? {
        for header in fields[values: .cookie] {
            for part in header.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == cookie { return String(kv[1]) }
            }
        }
        return nil
    }

    /// `HttpOnly; Secure; SameSite=Strict`, without `Secure` on `--plain-http`.
    func setCookie(_ token: String) -> String {
        "\(Self.cookie)=\(token); Path=/teacher; Max-Age=\(12 * 3600); HttpOnly;\(secureCookie ? " Secure;" : "") SameSite=Strict"
    }

    var clearCookie: String {
        "\(Self.cookie)=; Path=/teacher; Max-Age=0; HttpOnly;\(secureCookie ? " Secure;" : "") SameSite=Strict"
    }
}

/// The teacher key from `web --teacher-key-file FILE`: the file's text without its trailing
/// newline. One function, so that the key-file rules of `receive`/`stop-all` can replace it.
enum TeacherKeyFile {
    static func read(_ path: String) throws(WebServerError) -> String {
        // The rules of every secret file (SecretFile: only its owner may read it, as ssh wants).
        let key: String
        do {
            key = try SecretFile.read(path: path)
        } catch {
            throw WebServerError(description: "--teacher-key-file: \(error)")
        }
        do {
            _ = try TeacherKey(text: key)
        } catch {
            throw WebServerError(description: "--teacher-key-file \(path): \(error)")
        }
        return key
    }
}
