import CSDL2

/// A virtual joystick that SDL treats like a plugged-in pad (`SDL_JoystickAttachVirtualEx`,
/// SDL ≥ 2.24): for tests and demos without hardware. It lives in this process only.
///
/// Raw values are what the joystick reports, as with real hardware: sticks −32768…32767;
/// triggers use the whole Int16 range too (−32768 = released, 32767 = fully pressed), which
/// SDL's game-controller layer turns into 0…32767.
package struct VirtualPad: Hashable, Sendable {
    /// SDL's instance id (also ``PadInfo/instanceID`` of the pad this creates).
    package let instanceID: Int32
    package let name: String

    /// A stick position −1…1 as a raw reading.
    package static func raw(stick value: Double) -> Int16 {
        Int16((min(1, max(-1, value)) * 32767).rounded())
    }

    /// A trigger position 0…1 as a raw reading (see the type's note on trigger ranges).
    package static func raw(trigger value: Double) -> Int16 {
        Int16((min(1, max(0, value)) * 65535 - 32768).rounded())
    }
}

/// SDL calls for virtual pads. Must run on the ``SDLThread``.
enum SDLVirtualPads {
    /// `gameController: true` gives the standard layout (6 axes, 21 buttons) with SDL's
    /// automatic mapping; false gives a 2-axis, 4-button joystick SDL has no mapping for.
    /// `axes`/`buttons` are its state from the start (as a pad plugged in with a trigger held).
    static func attach(_ sdl: SDLLibrary, name: String, gameController: Bool, axes: [PadAxis: Int16] = [:],
                       buttons: [PadButton: Bool] = [:]) -> Result<VirtualPad, GamepadError> {
        var desc = SDL_VirtualJoystickDesc()
        desc.version = UInt16(SDL_VIRTUAL_JOYSTICK_DESC_VERSION)
        if gameController {
            desc.type = UInt16(SDL_JOYSTICK_TYPE_GAMECONTROLLER.rawValue)
            desc.naxes = UInt16(SDL_CONTROLLER_AXIS_MAX.rawValue)
            desc.nbuttons = UInt16(SDL_CONTROLLER_BUTTON_MAX.rawValue)
        } else {
            desc.type = UInt16(SDL_JOYSTICK_TYPE_FLIGHT_STICK.rawValue)
            desc.naxes = 2
            desc.nbuttons = 4
        }
        let index = name.withCString { text -> Int32 in
            desc.name = text
            return sdl.SDL_JoystickAttachVirtualEx(&desc)
        }
        guard index >= 0 else { return .failure(.sdl(call: "SDL_JoystickAttachVirtualEx", message: sdl.lastError())) }
        // Keep a joystick handle open: virtual axes and buttons can only be set through one.
        guard sdl.SDL_JoystickOpen(index) != nil else {
            let message = sdl.lastError()
            _ = sdl.SDL_JoystickDetachVirtual(index)
            return .failure(.sdl(call: "SDL_JoystickOpen(virtual)", message: message))
        }
        let pad = VirtualPad(instanceID: sdl.SDL_JoystickGetDeviceInstanceID(index), name: name)
        if gameController {
            // Triggers rest at the bottom of their raw range, not at 0 (which is half-pressed).
            var initial: [PadAxis: Int16] = [.leftTrigger: -32768, .rightTrigger: -32768]
            initial.merge(axes) { $1 }
            if case .failure(let error) = update(sdl, pad, axes: initial, buttons: buttons) { return .failure(error) }
        }
        return .success(pad)
    }

    /// Sets axes and buttons in one go: they reach the reader together at the next pump.
    static func update(_ sdl: SDLLibrary, _ pad: VirtualPad, axes: [PadAxis: Int16], buttons: [PadButton: Bool]) -> Result<Void, GamepadError> {
        guard let joystick = sdl.SDL_JoystickFromInstanceID(pad.instanceID) else {
            return .failure(.sdl(call: "SDL_JoystickFromInstanceID(\(pad.instanceID))", message: "virtual pad \"\(pad.name)\" is not attached"))
        }
        for (axis, value) in axes.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where sdl.SDL_JoystickSetVirtualAxis(joystick, Int32(axis.rawValue), value) != 0 {
            return .failure(.sdl(call: "SDL_JoystickSetVirtualAxis(\(axis.name))", message: sdl.lastError()))
        }
        for (button, held) in buttons.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where sdl.SDL_JoystickSetVirtualButton(joystick, Int32(button.rawValue), held ? 1 : 0) != 0 {
            return .failure(.sdl(call: "SDL_JoystickSetVirtualButton(\(button.name))", message: sdl.lastError()))
        }
        return .success(())
    }

    static func detach(_ sdl: SDLLibrary, _ pad: VirtualPad) -> Result<Void, GamepadError> {
        guard let index = (0..<sdl.SDL_NumJoysticks()).first(where: { sdl.SDL_JoystickGetDeviceInstanceID($0) == pad.instanceID }) else {
            return .failure(.sdl(call: "SDL_JoystickDetachVirtual", message: "virtual pad \"\(pad.name)\" is not attached"))
        }
        if let joystick = sdl.SDL_JoystickFromInstanceID(pad.instanceID) { sdl.SDL_JoystickClose(joystick) }
        guard sdl.SDL_JoystickDetachVirtual(index) == 0 else {
            return .failure(.sdl(call: "SDL_JoystickDetachVirtual", message: sdl.lastError()))
        }
        return .success(())
    }
}
