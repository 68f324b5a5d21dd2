// Avahi's Bonjour compatibility layer. Included by full path rather than through pkg-config,
// whose flags carry -D_REENTRANT, which SwiftPM refuses with a warning on every build.
#include <avahi-compat-libdns_sd/dns_sd.h>
