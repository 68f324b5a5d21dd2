import Foundation
import Testing
import WebServer

/// The HTTPS certificate: made once in the state directory (key 0600), kept across starts, the
/// fingerprint as browsers show it; bad files give one clear line.
struct WebCertificateTests {
    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "ar-cert-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func madeOnFirstStartAndKeptAfterwards() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let dir = base + "/analog-remote"
        let first = try WebCertificate.selfSigned(directory: dir, hostNames: ["host.local"])
        #expect(first.created)
        #expect(first.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let mode = try #require(FileManager.default.attributesOfItem(atPath: dir + "/web-key.pem")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(first.fingerprint.wholeMatch(of: /([0-9A-F]{2}:){31}[0-9A-F]{2}/) != nil, "\(first.fingerprint)")
        let second = try WebCertificate.selfSigned(directory: dir, hostNames: ["host.local"])
        #expect(!second.created)
        #expect(second.fingerprint == first.fingerprint, "the phones that trusted it keep trusting it")
    }

    @Test func theStateDirectoryFollowsXDG() {
        #expect(WebCertificate.stateDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/a"]) == "/x/state/analog-remote")
        #expect(WebCertificate.stateDirectory(environment: ["HOME": "/home/a"]) == "/home/a/.local/state/analog-remote")
        #expect(WebCertificate.stateDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/a"])
                == "/home/a/.local/state/analog-remote", "a relative XDG path is ignored, as the spec says")
    }

    @Test func filesThatAreNotPEMAreRefusedWithTheirName() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try "hello".write(toFile: base + "/cert.pem", atomically: true, encoding: .utf8)
        try "hello".write(toFile: base + "/key.pem", atomically: true, encoding: .utf8)
        #expect(throws: WebCertificateError.self) { try WebCertificate.load(certificate: base + "/cert.pem", key: base + "/key.pem") }
        do throws(WebCertificateError) {
            _ = try WebCertificate.load(certificate: base + "/cert.pem", key: base + "/key.pem")
        } catch {
            #expect(error.description == "\(base)/cert.pem: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)")
        }
        do throws(WebCertificateError) {
            _ = try WebCertificate.load(certificate: base + "/missing.pem", key: base + "/key.pem")
        } catch {
            #expect(error.description.contains("missing.pem: cannot read it"))
        }
    }
}
