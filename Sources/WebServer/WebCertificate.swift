#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import Foundation
import SwiftASN1
import SystemIO
import X509

/// The HTTPS certificate of `analog-remote web`: a self-signed one made on first start (P-256,
/// ten years, `CN=analog-remote web`, SANs for the host's names) and kept in the user's state
/// directory, so phones that trusted it once keep trusting it; or the teacher's own files.
///
/// Files: `DIR/web-cert.pem` (mode 0644) and `DIR/web-key.pem` (mode 0600), DIR made 0700 and
/// checked (``SafeDirectory``; each file written whole, never through a link), DIR =
/// `$XDG_STATE_HOME/analog-remote`, default `~/.local/state/analog-remote`.
package struct WebCertificate: Sendable {
    package let certificatePEM: String
    package let privateKeyPEM: String
    /// True when it was made by this start.
    package let created: Bool
    /// Where it came from (for the log line).
    package let origin: String

    /// `AB:CD:…` — SHA-256 over the certificate's DER bytes, as browsers show it.
    package var fingerprint: String {
        guard let der = try? PEMDocument(pemString: certificatePEM).derBytes else { return "?" }
        return SHA256.hash(data: der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// The state directory (not created here).
    package static func stateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        StateDirectory.path(environment: environment)
    }

    /// Reads `--tls-cert` and `--tls-key`.
    package static func load(certificate: String, key: String) throws(WebCertificateError) -> WebCertificate {
        try checked(certificate: try read(certificate), certificate, key: try read(key), key)
    }

    static func checked(certificate cert: String, _ certificate: String, key: String, _ keyPath: String) throws(WebCertificateError) -> WebCertificate {
        guard cert.contains("-----BEGIN CERTIFICATE-----") else {
            throw WebCertificateError("\(certificate): not a PEM certificate (expected -----BEGIN CERTIFICATE-----)")
        }
        guard key.contains("PRIVATE KEY-----") else {
            throw WebCertificateError("\(keyPath): not a PEM private key (expected -----BEGIN … PRIVATE KEY-----)")
        }
        return WebCertificate(certificatePEM: cert, privateKeyPEM: key, created: false, origin: certificate)
    }

    /// The self-signed certificate in `directory`, made there first if it is not there yet.
    package static func selfSigned(directory: String, hostNames: [String], now: Date = Date()) throws(WebCertificateError) -> WebCertificate {
        let dir: SafeDirectory
        do {
            dir = try SafeDirectory(directory, mode: 0o700)
        } catch {
            throw WebCertificateError("\(error) (or set XDG_STATE_HOME, or give --tls-cert/--tls-key)")
        }
        let certPath = dir.path + "/web-cert.pem"
        if let cert = try? dir.read("web-cert.pem", limit: 1 << 20), let key = try? dir.read("web-key.pem", limit: 1 << 20) {
            return try checked(certificate: String(decoding: cert, as: UTF8.self), certPath,
                               key: String(decoding: key, as: UTF8.self), dir.path + "/web-key.pem")
        }
        let (certPEM, keyPEM) = try make(hostNames: hostNames, now: now)
        do {
            // Replaced whole, never through a link: a stale half pair is overwritten.
            try dir.replace("web-key.pem", with: Array(keyPEM.utf8), mode: 0o600)
            try dir.replace("web-cert.pem", with: Array(certPEM.utf8), mode: 0o644)
        } catch {
            throw WebCertificateError("\(error) (set XDG_STATE_HOME, or give --tls-cert/--tls-key)")
        }
        return WebCertificate(certificatePEM: certPEM, privateKeyPEM: keyPEM, created: true, origin: certPath)
    }

    static func make(hostNames: [String], now: Date) throws(WebCertificateError) -> (String, String) {
        do {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                CommonName("analog-remote web")
                OrganizationName("AnalogRemote")
            }
            var sans: [GeneralName] = [.dnsName("localhost")]
            for host in Set(hostNames) where !host.isEmpty && host != "localhost" { sans.append(.dnsName(host)) }
            sans.append(.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])))
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(sans)
            }
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: .init(key.publicKey),
                notValidBefore: now - 3600,
                notValidAfter: now + 10 * 365 * 86400,
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: .init(key))
            return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
        } catch {
            throw WebCertificateError("cannot make a self-signed certificate: \(error)")
        }
    }

    private static func read(_ path: String) throws(WebCertificateError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw WebCertificateError("\(path): cannot read it (check the path and its permissions)")
        }
        return text
    }
}

package struct WebCertificateError: Error, CustomStringConvertible, Sendable {
    package let description: String
    init(_ description: String) { self.description = description }
}
