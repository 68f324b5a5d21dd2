// ALSA: only the rawmidi and control interfaces are used.
#include <alsa/asoundlib.h>
