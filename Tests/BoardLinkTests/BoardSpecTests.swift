import BoardLink
import BoardProtocol
import Testing

@Suite struct BoardSpecTests {
    @Test(arguments: [
        ("sim", BoardSpec.simulated, "sim"),
        ("sim:motors", .simulated(.motors), "sim"),
        ("sim:stock", .simulated(.stock), "sim:stock"),
        ("serial:/dev/ttyACM0", .serial(path: "/dev/ttyACM0", baud: 115200), "serial:/dev/ttyACM0"),
        ("serial:/dev/ttyUSB1@9600", .serial(path: "/dev/ttyUSB1", baud: 9600), "serial:/dev/ttyUSB1@9600"),
        ("serial:/dev/ttyACM0@115200", .serial(path: "/dev/ttyACM0", baud: 115200), "serial:/dev/ttyACM0"),
        ("midi:hw:1,0,0", .midi(device: "hw:1,0,0"), "midi:hw:1,0,0"),
        ("midi-serial:/tmp/board@38400", .midiSerial(path: "/tmp/board", baud: 38400), "midi-serial:/tmp/board@38400"),
        ("serial:/tmp/a@b", .serial(path: "/tmp/a@b", baud: 115200), "serial:/tmp/a@b"),
    ])
    func parses(text: String, spec: BoardSpec, canonical: String) throws {
        #expect(try BoardSpec(text) == spec)
        #expect(spec.description == canonical)
        #expect(try BoardSpec(spec.description) == spec)
    }

    @Test(arguments: [
        ("usb", "bad board spec \"usb\": expected sim[:stock|:motors], serial:/dev/ttyACM0[@115200], midi:hw:1,0,0 or midi-serial:PATH[@115200]"),
        ("serial:", "bad board spec \"serial:\": the device path is missing (e.g. serial:/dev/ttyACM0)"),
        ("serial:/dev/ttyACM0@1234", "bad board spec \"serial:/dev/ttyACM0@1234\": baud 1234 is not one of 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600, 1000000, 2000000"),
        ("sim:usb", "bad board spec \"sim:usb\": the simulated firmware is sim:stock or sim:motors"),
        ("midi:", "bad board spec \"midi:\": the ALSA device is missing (e.g. midi:hw:1,0,0; `analog-remote boards` lists them)"),
    ])
    func refusesWithTheSpecAndWhatIsAllowed(text: String, message: String) {
        #expect(throws: BoardLinkError(.badSpec, device: text, message)) { try BoardSpec(text) }
    }
}
