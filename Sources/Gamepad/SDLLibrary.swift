#if canImport(Glibc)
import Glibc
#endif
import CSDL2

/// libSDL2, opened at run time with `dlopen` the first time a gamepad input or `gamepads` asks
/// for it: the binary does not link SDL2, so a robot (which never reads a gamepad) installs no
/// SDL and none of the X11, Wayland and sound libraries that come with it. The Debian package
/// only recommends `libsdl2-2.0-0`.
///
/// Each member is one SDL call, named as in SDL's header so call sites read as C does
/// (`sdl.SDL_Init(…)`). Like every SDL call, they must run on the ``SDLThread``.
///
/// Trap: the library is never closed (SDL leaves threads and handlers behind that must not
/// outlive its code); the handle lives as long as the process.
struct SDLLibrary: Sendable {
    /// SDL2's soname: the file the runtime package (`libsdl2-2.0-0`) installs.
    static let soname = "libSDL2-2.0.so.0"

    /// The library, opened on first use; the same answer for the rest of the process.
    static let shared: Result<SDLLibrary, GamepadError> = open(soname)

    let SDL_SetHint: CSDL2_SetHint
    let SDL_SetMainReady: CSDL2_SetMainReady
    let SDL_Init: CSDL2_Init
    let SDL_Quit: CSDL2_Quit
    let SDL_GetError: CSDL2_GetError
    let SDL_GameControllerAddMapping: CSDL2_GameControllerAddMapping
    let SDL_GameControllerOpen: CSDL2_GameControllerOpen
    let SDL_GameControllerClose: CSDL2_GameControllerClose
    let SDL_GameControllerGetAttached: CSDL2_GameControllerGetAttached
    let SDL_GameControllerGetAxis: CSDL2_GameControllerGetAxis
    let SDL_GameControllerGetButton: CSDL2_GameControllerGetButton
    let SDL_IsGameController: CSDL2_IsGameController
    let SDL_NumJoysticks: CSDL2_NumJoysticks
    let SDL_JoystickNameForIndex: CSDL2_JoystickNameForIndex
    let SDL_JoystickGetDeviceGUID: CSDL2_JoystickGetDeviceGUID
    let SDL_JoystickGetDeviceInstanceID: CSDL2_JoystickGetDeviceInstanceID
    let SDL_JoystickGetGUIDString: CSDL2_JoystickGetGUIDString
    let SDL_JoystickOpen: CSDL2_JoystickOpen
    let SDL_JoystickClose: CSDL2_JoystickClose
    let SDL_JoystickFromInstanceID: CSDL2_JoystickFromInstanceID
    let SDL_JoystickAttachVirtualEx: CSDL2_JoystickAttachVirtualEx
    let SDL_JoystickDetachVirtual: CSDL2_JoystickDetachVirtual
    let SDL_JoystickSetVirtualAxis: CSDL2_JoystickSetVirtualAxis
    let SDL_JoystickSetVirtualButton: CSDL2_JoystickSetVirtualButton
    let SDL_PumpEvents: CSDL2_PumpEvents
    let SDL_PeepEvents: CSDL2_PeepEvents

    /// Opens `file` and looks up every call above; ``GamepadError/libraryMissing(library:reason:)``
    /// when the file is not there or lacks a call (an SDL older than 2.24 has no virtual pads).
    static func open(_ file: String) -> Result<SDLLibrary, GamepadError> {
        guard let handle = dlopen(file, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(.libraryMissing(library: file, reason: lastLoaderError()))
        }
        do throws(GamepadError) {
            return .success(try SDLLibrary(handle: handle, file: file))
        } catch {
            return .failure(error)
        }
    }

    private init(handle: UnsafeMutableRawPointer, file: String) throws(GamepadError) {
        func call<T>(_ name: String) throws(GamepadError) -> T {
            guard let address = dlsym(handle, name) else {
                throw .libraryMissing(library: file, reason: "\(name) not found (SDL 2.24 or newer is needed)")
            }
            return unsafeBitCast(address, to: T.self)
        }
        SDL_SetHint = try call("SDL_SetHint")
        SDL_SetMainReady = try call("SDL_SetMainReady")
        SDL_Init = try call("SDL_Init")
        SDL_Quit = try call("SDL_Quit")
        SDL_GetError = try call("SDL_GetError")
        SDL_GameControllerAddMapping = try call("SDL_GameControllerAddMapping")
        SDL_GameControllerOpen = try call("SDL_GameControllerOpen")
        SDL_GameControllerClose = try call("SDL_GameControllerClose")
        SDL_GameControllerGetAttached = try call("SDL_GameControllerGetAttached")
        SDL_GameControllerGetAxis = try call("SDL_GameControllerGetAxis")
        SDL_GameControllerGetButton = try call("SDL_GameControllerGetButton")
        SDL_IsGameController = try call("SDL_IsGameController")
        SDL_NumJoysticks = try call("SDL_NumJoysticks")
        SDL_JoystickNameForIndex = try call("SDL_JoystickNameForIndex")
        SDL_JoystickGetDeviceGUID = try call("SDL_JoystickGetDeviceGUID")
        SDL_JoystickGetDeviceInstanceID = try call("SDL_JoystickGetDeviceInstanceID")
        SDL_JoystickGetGUIDString = try call("SDL_JoystickGetGUIDString")
        SDL_JoystickOpen = try call("SDL_JoystickOpen")
        SDL_JoystickClose = try call("SDL_JoystickClose")
        SDL_JoystickFromInstanceID = try call("SDL_JoystickFromInstanceID")
        SDL_JoystickAttachVirtualEx = try call("SDL_JoystickAttachVirtualEx")
        SDL_JoystickDetachVirtual = try call("SDL_JoystickDetachVirtual")
        SDL_JoystickSetVirtualAxis = try call("SDL_JoystickSetVirtualAxis")
        SDL_JoystickSetVirtualButton = try call("SDL_JoystickSetVirtualButton")
        SDL_PumpEvents = try call("SDL_PumpEvents")
        SDL_PeepEvents = try call("SDL_PeepEvents")
    }

    private static func lastLoaderError() -> String {
        guard let text = dlerror() else { return "dlopen failed" }
        return String(cString: text)
    }

    /// SDL_GetError's text, or a placeholder when SDL left it empty.
    func lastError() -> String {
        guard let text = SDL_GetError() else { return "unknown SDL error" }
        let s = String(cString: text)
        return s.isEmpty ? "unknown SDL error" : s
    }
}
