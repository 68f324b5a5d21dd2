// The controller's buttons are RemoteWire's own type (the wire's bit layout), named here so a
// program needs `import AnalogRemoteKit` alone.
@_exported import struct RemoteWire.Buttons
