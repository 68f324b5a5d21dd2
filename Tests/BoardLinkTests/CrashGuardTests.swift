@testable import BoardLink
import BoardProtocol
import Testing

@Suite struct CrashGuardTests {
    @Test func textStopBytesEndAnyCutOffLineThenWriteTheSafeStateRuns() {
        let bytes = BoardCrashGuard.stopBytes(profile: .kit, midi: false)
        #expect(String(decoding: bytes, as: UTF8.self) == "\nW 09 0000\nW 0f 0000\nW 22 0000\n")
    }

    @Test func midiStopBytesEndAnyCutOffSysExThenFrameEachLine() {
        let bytes = BoardCrashGuard.stopBytes(profile: .kit, midi: true)
        #expect(bytes.first == 0xF7)
        #expect(bytes.filter { $0 == 0xF0 }.count == 3 && bytes.filter { $0 == 0xF7 }.count == 4)
        #expect(bytes.dropFirst().allSatisfy { $0 < 0x80 || $0 == 0xF0 || $0 == 0xF7 })
    }

    @Test func motorsAtOtherAddressesAreStoppedThere() {
        var profile = MemoryMapProfile.kit
        profile.motorLeft = 0x12
        profile.motorRight = 0x14
        let text = String(decoding: BoardCrashGuard.stopBytes(profile: profile, midi: false), as: UTF8.self)
        #expect(text.contains("W 12 00\n") && text.contains("W 14 00\n"))
        #expect(BoardCrashGuard.stopBytes(profile: profile, midi: false).count < BoardCrashGuard.capacity)
    }
}
