import ConfigFile
import ErrorReporting
import Gamepad
import Testing

@Suite struct UserFacingTests {
    @Test func exitStatusPerFailure() throws {
        let config = GamepadConfigError(file: "pad.toml", key: "gamepad.expo", problem: "2 is not allowed (allowed: a number from 0 to 1)")
        #expect(config.userFacing.status == .badConfiguration)
        #expect(config.userFacing.message == "pad.toml: gamepad.expo: 2 is not allowed (allowed: a number from 0 to 1)")
        #expect(GamepadError.config(config).userFacing.status == .badConfiguration)
        let sdl = GamepadError.sdl(call: "SDL_Init(GAMECONTROLLER|JOYSTICK)", message: "No such device").userFacing
        #expect(sdl.status == .deviceUnavailable)
        #expect(sdl.message == "gamepad: SDL_Init(GAMECONTROLLER|JOYSTICK) failed: No such device (is libsdl2 installed? run scripts/setup.sh)")
        let missing = GamepadError.libraryMissing(library: "libSDL2-2.0.so.0",
                                                  reason: "libSDL2-2.0.so.0: cannot open shared object file: No such file or directory").userFacing
        #expect(missing.status == .deviceUnavailable)
        #expect(missing.message == "gamepad: SDL2 (libSDL2-2.0.so.0) cannot be loaded: libSDL2-2.0.so.0: cannot open shared object file: No such file or directory — gamepads need SDL2: sudo apt-get install libsdl2-2.0-0")
        #expect(!missing.message.contains("\n"))
        #expect(GamepadError.busy.userFacing.status == .failure)
        #expect(GamepadSelectorError(text: "").userFacing.status == .usage)
    }
}
