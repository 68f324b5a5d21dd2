/// A joystick SDL sees, as listed by `analog-remote gamepads` and matched by a
/// ``GamepadSelector``.
package struct PadInfo: Hashable, Sendable {
    /// SDL's device index: the position in the current list (0 = first). It shifts when a pad
    /// before it is unplugged.
    package var index: Int
    package var name: String
    /// SDL's joystick GUID as 32 lowercase hex digits (bus, vendor, product, version, …);
    /// identical pads share it.
    package var guid: String
    /// SDL knows how to read it as a standard gamepad (its database, an automatic mapping, or a
    /// `mappings` entry of the config). A pad without one is listed but never driven.
    package var hasMapping: Bool
    /// SDL's instance id: new for every plug-in, so a replugged pad is a new instance.
    package var instanceID: Int32

    package init(index: Int, name: String, guid: String, hasMapping: Bool, instanceID: Int32) {
        self.index = index
        self.name = name
        self.guid = guid
        self.hasMapping = hasMapping
        self.instanceID = instanceID
    }
}

extension PadInfo: CustomStringConvertible {
    /// `"Xbox 360 Controller" (index 0)`
    package var description: String { "\"\(name)\" (index \(index))" }
}
