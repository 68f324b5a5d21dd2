// ALSA: the rawmidi and control interfaces (boards, `boards`) and the sequencer (MIDI keyboards
// as controller input, `midi-inputs`).
#include <alsa/asoundlib.h>

// Sequencer macros and union fields Swift cannot reach directly, wrapped as functions.

/// snd_seq_ev_is_channel_type(ev): a note, controller, bend… event (one that carries a channel).
static inline int CALSA_seq_ev_is_channel_type(const snd_seq_event_t *ev) {
    return snd_seq_ev_is_channel_type(ev) ? 1 : 0;
}

/// ev->data.addr: the client and port a CLIENT_START/EXIT or PORT_START/EXIT/CHANGE announce is about.
static inline snd_seq_addr_t CALSA_seq_event_addr(const snd_seq_event_t *ev) {
    return ev->data.addr;
}

/// ev->data.connect: sender and destination of a PORT_SUBSCRIBED/UNSUBSCRIBED announce.
static inline snd_seq_connect_t CALSA_seq_event_connect(const snd_seq_event_t *ev) {
    return ev->data.connect;
}
