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
/// Files: `DIR/web-cert.pem` and `DIR/web-key.pem` (mode 0600, DIR made 0700), DIR =
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
        let cert = try read(certificate)
        let key = try read(key)
        guard cert.contains("-----BEGIN CERTIFICATE-----") else {
            throw WebCertificateError("\(certificate): not a PEM certificate (expected -----BEGIN CERTIFICATE-----)")
        }
        guard key.contains("PRIVATE KEY-----") else {
            throw WebCertificateError("\(key): not a PEM private key (expected -----BEGIN … PRIVATE KEY-----)")
        }
        return WebCertificate(certificatePEM: cert, privateKeyPEM: key, created: false, origin: certificate)
    }

    /// The self-signed certificate in `directory`, made there first if it is not there yet.
    package static func selfSigned(directory: String, hostNames: [String], now: Date = Date()) throws(WebCertificateError) -> WebCertificate {
        let certPath = directory + "/web-cert.pem"
        let keyPath = directory + "/web-key.pem"
        if FileManager.default.fileExists(atPath: certPath), FileManager.default.fileExists(atPath: keyPath) {
            let cert = try load(certificate: certPath, key: keyPath)
            return WebCertificate(certificatePEM: cert.certificatePEM, privateKeyPEM: cert.privateKeyPEM, created: false, origin: certPath)
        }
        let (certPEM, keyPEM) = try make(hostNames: hostNames, now: now)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw WebCertificateError("cannot create \(directory): \(error.localizedDescription) (set XDG_STATE_HOME, or give --tls-cert/--tls-key)")
        }
        try write(keyPEM, to: keyPath, mode: 0o600)
        try write(certPEM, to: certPath, mode: 0o644)
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

    private static func write(_ text: String, to path: String, mode: mode_t) throws(WebCertificateError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw WebCertificateError("cannot write \(path): \(String(cString: strerror(errno))) (set XDG_STATE_HOME, or give --tls-cert/--tls-key)")
        }
        defer { close(fd) }
        _ = fchmod(fd, mode)
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw WebCertificateError("cannot write \(path): \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(n)
        }
    }
}

package struct WebCertificateError: Error, CustomStringConvertible, Sendable {
    package let description: String
    init(_ description: String) { self.description = description }
}
