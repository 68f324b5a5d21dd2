// SDL2, joystick and game-controller subsystems only. Included by full path (see Package.swift).
//
// Nothing here is linked: Gamepad opens libSDL2 at run time (SDLLibrary.swift), so a machine that
// never drives from a gamepad (a robot) needs no SDL and none of the desktop libraries it pulls.
// The header gives the types and constants; each CSDL2_<call> below is the type of one SDL call
// Gamepad looks up, taken from SDL's own declaration so the two cannot drift apart.
#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>

#define CSDL2_CALL(name) typedef __typeof__(SDL_##name) *CSDL2_##name;
CSDL2_CALL(SetHint)
CSDL2_CALL(SetMainReady)
CSDL2_CALL(Init)
CSDL2_CALL(Quit)
CSDL2_CALL(GetError)
CSDL2_CALL(GameControllerAddMapping)
CSDL2_CALL(GameControllerOpen)
CSDL2_CALL(GameControllerClose)
CSDL2_CALL(GameControllerGetAttached)
CSDL2_CALL(GameControllerGetAxis)
CSDL2_CALL(GameControllerGetButton)
CSDL2_CALL(IsGameController)
CSDL2_CALL(NumJoysticks)
CSDL2_CALL(JoystickNameForIndex)
CSDL2_CALL(JoystickGetDeviceGUID)
CSDL2_CALL(JoystickGetDeviceInstanceID)
CSDL2_CALL(JoystickGetGUIDString)
CSDL2_CALL(JoystickOpen)
CSDL2_CALL(JoystickClose)
CSDL2_CALL(JoystickFromInstanceID)
CSDL2_CALL(JoystickAttachVirtualEx)
CSDL2_CALL(JoystickDetachVirtual)
CSDL2_CALL(JoystickSetVirtualAxis)
CSDL2_CALL(JoystickSetVirtualButton)
CSDL2_CALL(PumpEvents)
CSDL2_CALL(PeepEvents)
#undef CSDL2_CALL
