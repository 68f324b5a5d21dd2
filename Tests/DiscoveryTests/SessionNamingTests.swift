import Discovery
import Testing

@Suite struct SessionNamingTests {
    /// Published FNV-1a 64 vectors (Fowler/Noll/Vo test suite), so the hash is the real FNV-1a.
    @Test(arguments: [("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8)]
          as [(String, UInt64)])
    func fnv1aMatchesTheReferenceVectors(text: String, expected: UInt64) {
        #expect(FNV1a64.hash(text.utf8) == expected)
    }

    /// The worked examples of Protocol.md §6 (computed independently with Python's FNV-1a).
    @Test(arguments: [
        ("KLabRemoteSample", "_s6c11ba5f129f1e95"),
        ("3年B組 チーム2", "_s81934f49177fefa3"),
    ])
    func subtypeOfTheDocumentedExamples(id: String, subtype: String) throws {
        let session = try SessionID(id)
        #expect(session.subtype == subtype)
        #expect(session.registrationType == "_analogremote._udp," + subtype)
        #expect(session.browseType == subtype + "._sub._analogremote._udp")
        // A program's session peer (Protocol.md §7.13): same subtype, its own service type.
        #expect(session.registrationType(.peer) == "_analogsession._udp," + subtype)
        #expect(session.browseType(.peer) == subtype + "._sub._analogsession._udp")
    }

    @Test func subtypeIsAlwaysUnderscoreSPlusSixteenLowercaseHexDigits() throws {
        for id in ["x", "KLabRemoteSample", "3年B組 チーム2", String(repeating: "é", count: 100), "\u{0}"] {
            let s = try SessionID(id).subtype
            #expect(s.count == 18 && s.hasPrefix("_s"))
            #expect(s.dropFirst(2).allSatisfy { "0123456789abcdef".contains($0) })
        }
        #expect(FNV1a64.hex(0) == "0000000000000000")
        #expect(FNV1a64.hex(1) == "0000000000000001")
    }

    @Test func idsDifferingOnlyInNormalizationAreDifferentSessions() throws {
        let nfc = try SessionID("caf\u{E9}"), nfd = try SessionID("cafe\u{301}")
        #expect(nfc.subtype != nfd.subtype)
        #expect(nfc != nfd)
    }

    @Test func emptyAndOverlongIDsAreRefused() throws {
        #expect(throws: SessionIDError.empty) { try SessionID("") }
        let longest = String(repeating: "a", count: SessionID.maximumByteCount)
        #expect(try SessionID(longest).text == longest)
        // 83 three-byte characters = 249 bytes: two too many.
        #expect(throws: SessionIDError.tooLong(byteCount: 249)) { try SessionID(String(repeating: "組", count: 83)) }
    }

    @Test func peerIDsAreSixteenHexDigitsAndDiffer() {
        let a = PeerID.random(), b = PeerID.random()
        #expect(a.count == 16 && b.count == 16)
        #expect(a != b)
    }

    @Test(arguments: [
        ("robot", "robot #2"), ("robot #2", "robot #3"), ("robot #9", "robot #10"),
        ("robot#2", "robot#2 #2"), ("robot #0", "robot #0 #2"), ("#2", "#2 #2"),
        ("3年B組 チーム2", "3年B組 チーム2 #2"),
    ])
    func alternativeNamesFollowAvahisStyle(name: String, expected: String) {
        #expect(InstanceName.alternative(to: name) == expected)
    }

    @Test func namesAreFittedToSixtyThreeBytesOnCharacterBoundaries() {
        let long = String(repeating: "組", count: 30)          // 90 bytes
        let fitted = InstanceName.fitted(long)
        #expect(fitted.utf8.count == 63 && fitted == String(repeating: "組", count: 21))
        let alt = InstanceName.alternative(to: long)
        #expect(alt.utf8.count <= 63 && alt.hasSuffix(" #2") && alt.hasPrefix("組"))
        #expect(InstanceName.fitted("short") == "short")
    }
}
