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
        #expect(GamepadError.busy.userFacing.status == .failure)
        #expect(GamepadSelectorError(text: "").userFacing.status == .usage)
    }
}
