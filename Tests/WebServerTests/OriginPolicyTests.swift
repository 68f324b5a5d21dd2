import Testing
import WebServer

/// Which pages may open the server's WebSockets: the server's own origins (its scheme, its port,
/// a host it answers to) and --allow-origin; nothing else, not even with a matching Host.
struct OriginPolicyTests {
    let policy = OriginPolicy(scheme: "https", port: { 8443 }, hosts: { ["192.0.2.5", "127.0.0.1", "localhost", "lab", "lab.local"] },
                              extra: [OriginPolicy.Origin("https://robots.school.example")!])

    @Test(arguments: ["https://192.0.2.5:8443", "https://LAB.local:8443", "https://localhost:8443", "https://127.0.0.1:8443/",
                      "https://robots.school.example", "https://robots.school.example:443"])
    func ownAndAllowedOriginsPass(_ origin: String) {
        #expect(policy.refusal(origin) == nil)
    }

    @Test(arguments: ["https://evil.example", "https://evil.example:8443", "http://192.0.2.5:8443", "https://192.0.2.5:9443",
                      "https://192.0.2.5", "null", "", "file://", "https://192.0.2.5:8443/path", "https://a@192.0.2.5:8443",
                      "https://robots.school.example:8443", "chrome-extension://abc"])
    func anythingElseIsRefused(_ origin: String) {
        #expect(policy.refusal(origin) != nil)
    }

    @Test func theRefusalSaysWhatToDo() {
        #expect(policy.refusal(nil) == "a WebSocket needs an Origin header (browsers send one): open the page this server serves")
        #expect(policy.refusal("https://evil.example:444")
            == "origin https://evil.example:444 is not allowed: open the page this server serves, or start web with --allow-origin https://evil.example:444")
    }

    @Test func originsAreReadAsBrowsersWriteThem() {
        #expect(OriginPolicy.Origin("HTTPS://Robots.Example")?.description == "https://robots.example:443")
        #expect(OriginPolicy.Origin("http://[::1]:8080")?.description == "http://[::1]:8080")
        #expect(OriginPolicy.Origin("http://host:0") == nil)
        #expect(OriginPolicy.Origin("ftp://host") == nil)
    }
}
