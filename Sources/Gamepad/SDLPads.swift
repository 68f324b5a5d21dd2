import CSDL2

/// SDL calls about pads. Every function here must run on the ``SDLThread``.
enum SDLPads {
    /// The joysticks SDL sees now, in device-index order.
    static func list(_ sdl: SDLLibrary) -> [PadInfo] {
        let count = Int(sdl.SDL_NumJoysticks())
        guard count > 0 else { return [] }
        return (0..<count).map { info(sdl, at: $0) }
    }

    static func info(_ sdl: SDLLibrary, at index: Int) -> PadInfo {
        let i = Int32(index)
        let name = sdl.SDL_JoystickNameForIndex(i).map { String(cString: $0) } ?? ""
        return PadInfo(index: index, name: name.isEmpty ? "unnamed joystick" : name,
                       guid: guidString(sdl, sdl.SDL_JoystickGetDeviceGUID(i)),
                       hasMapping: sdl.SDL_IsGameController(i) == SDL_TRUE,
                       instanceID: sdl.SDL_JoystickGetDeviceInstanceID(i))
    }

    static func guidString(_ sdl: SDLLibrary, _ guid: SDL_JoystickGUID) -> String {
        var text = [CChar](repeating: 0, count: 33)
        sdl.SDL_JoystickGetGUIDString(guid, &text, Int32(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
    }

    /// Every control of an open game controller, normalized.
    static func snapshot(_ sdl: SDLLibrary, _ controller: OpaquePointer) -> PadSnapshot {
        var snapshot = PadSnapshot.rest
        for axis in PadAxis.allCases {
            let raw = sdl.SDL_GameControllerGetAxis(controller, SDL_GameControllerAxis(rawValue: Int32(axis.rawValue)))
            snapshot[axis] = axis.normalized(raw)
        }
        for button in PadButton.allCases
        where sdl.SDL_GameControllerGetButton(controller, SDL_GameControllerButton(rawValue: Int32(button.rawValue))) != 0 {
            snapshot.set(button, held: true)
        }
        return snapshot
    }

    /// What one pump saw.
    struct Pumped {
        /// A device was added, removed or remapped.
        var devices = false
        /// An axis, button or hat of some pad moved.
        var input = false
    }

    /// Pumps SDL and empties its queue into `buffer` (reused across pumps: no allocation).
    static func pump(_ sdl: SDLLibrary, buffer: inout [SDL_Event]) -> Pumped {
        sdl.SDL_PumpEvents()
        var seen = Pumped()
        if buffer.isEmpty { buffer = [SDL_Event](repeating: SDL_Event(), count: 32) }
        while true {
            let n = Int(sdl.SDL_PeepEvents(&buffer, Int32(buffer.count), SDL_GETEVENT,
                                       SDL_FIRSTEVENT.rawValue, SDL_LASTEVENT.rawValue))
            if n <= 0 { break }
            for i in 0..<n {
                switch buffer[i].type {
                case SDL_JOYDEVICEADDED.rawValue, SDL_JOYDEVICEREMOVED.rawValue,
                     SDL_CONTROLLERDEVICEADDED.rawValue, SDL_CONTROLLERDEVICEREMOVED.rawValue,
                     SDL_CONTROLLERDEVICEREMAPPED.rawValue:
                    seen.devices = true
                case SDL_JOYAXISMOTION.rawValue...SDL_JOYBUTTONUP.rawValue,
                     SDL_CONTROLLERAXISMOTION.rawValue...SDL_CONTROLLERBUTTONUP.rawValue:
                    seen.input = true
                default:
                    break
                }
            }
            if n < buffer.count { break }
        }
        return seen
    }
}
