#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CALSA

/// A rawmidi (sub)device the ALSA control API reports.
package struct RawMIDIDevice: Hashable, Sendable {
    /// `hw:1,0,0`: what `midi:` takes.
    package let name: String
    package let cardName: String
    package let deviceName: String
    package let subdeviceName: String
    package let hasInput: Bool
    package let hasOutput: Bool
}

package enum RawMIDIDevices {
    /// Every rawmidi subdevice of every sound card; empty on a machine without /dev/snd.
    package static func list() -> [RawMIDIDevice] {
        guard ALSA.soundDevicesPresent else { return [] }
        var out: [RawMIDIDevice] = []
        var card: Int32 = -1
        while snd_card_next(&card) == 0 && card >= 0 {
            var ctl: OpaquePointer?
            guard snd_ctl_open(&ctl, "hw:\(card)", 0) == 0, let ctl else { continue }
            defer { snd_ctl_close(ctl) }
            var cardInfo: OpaquePointer?
            var cardName = "card \(card)"
            if snd_ctl_card_info_malloc(&cardInfo) == 0, let cardInfo {
                if snd_ctl_card_info(ctl, cardInfo) == 0 { cardName = ALSA.string(snd_ctl_card_info_get_name(cardInfo)) }
                snd_ctl_card_info_free(cardInfo)
            }
            var info: OpaquePointer?
            guard snd_rawmidi_info_malloc(&info) == 0, let info else { continue }
            defer { snd_rawmidi_info_free(info) }
            var device: Int32 = -1
            while snd_ctl_rawmidi_next_device(ctl, &device) == 0 && device >= 0 {
                func subdevices(_ stream: snd_rawmidi_stream_t) -> Int {
                    snd_rawmidi_info_set_device(info, UInt32(device))
                    snd_rawmidi_info_set_subdevice(info, 0)
                    snd_rawmidi_info_set_stream(info, stream)
                    guard snd_ctl_rawmidi_info(ctl, info) == 0 else { return 0 }
                    return Int(snd_rawmidi_info_get_subdevices_count(info))
                }
                let inputs = subdevices(SND_RAWMIDI_STREAM_INPUT)
                let outputs = subdevices(SND_RAWMIDI_STREAM_OUTPUT)
                for sub in 0..<max(inputs, outputs) {
                    let stream = sub < outputs ? SND_RAWMIDI_STREAM_OUTPUT : SND_RAWMIDI_STREAM_INPUT
                    snd_rawmidi_info_set_device(info, UInt32(device))
                    snd_rawmidi_info_set_subdevice(info, UInt32(sub))
                    snd_rawmidi_info_set_stream(info, stream)
                    var deviceName = "", subName = ""
                    if snd_ctl_rawmidi_info(ctl, info) == 0 {
                        deviceName = ALSA.string(snd_rawmidi_info_get_name(info))
                        subName = ALSA.string(snd_rawmidi_info_get_subdevice_name(info))
                    }
                    out.append(RawMIDIDevice(name: "hw:\(card),\(device),\(sub)", cardName: cardName, deviceName: deviceName,
                                             subdeviceName: subName, hasInput: sub < inputs, hasOutput: sub < outputs))
                }
            }
        }
        return out
    }
}
