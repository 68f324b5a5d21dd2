@testable import Gamepad
import Testing

/// SDL2 is opened at run time, not linked: a missing library is a typed error, not a crash at
/// start-up (the robot's package only recommends SDL2).
@Suite struct SDLLibraryTests {
    @Test func theInstalledSDL2HasEveryCallGamepadMakes() throws {
        _ = try SDLLibrary.open(SDLLibrary.soname).get()
    }

    @Test func aMissingLibraryIsLibraryMissingWithTheLoadersReason() {
        let file = "libSDL2-not-installed-here.so.0"
        guard case .failure(.libraryMissing(let library, let reason)) = SDLLibrary.open(file) else {
            Issue.record("opening \(file) did not fail with libraryMissing")
            return
        }
        #expect(library == file)
        #expect(reason.contains(file))
    }

    @Test func aLibraryWithoutSDLsCallsIsRefusedNamingTheFirstMissingOne() {
        // libc is surely there and has none of SDL's symbols.
        guard case .failure(.libraryMissing(_, let reason)) = SDLLibrary.open("libc.so.6") else {
            Issue.record("libc.so.6 was taken for SDL2")
            return
        }
        #expect(reason == "SDL_SetHint not found (SDL 2.24 or newer is needed)")
    }
}
