/* The C reference controller: `ANGLE [BUTTONS]` lines on stdin, the 8-byte state packet out.
 * Usage: peer-controller HOST:PORT   (an IPv4 address, e.g. 127.0.0.1:27183)
 * Lines as `analog-remote control --input stdin` reads them: ANGLE in radians within ±π/2,
 * BUTTONS a number, 0x hex, `none`, or names joined by `+`; `#` starts a comment. A new state
 * is sent at once, every state again every 20 ms; at end of input the neutral state three
 * times. A bad line is reported on stderr and skipped. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *names[] = {"forward", "backward", "a", "b", "x", "y", "l", "r",
                              "start", "select", "home", "l3", "r3", "left", "right"};
static int sock;
static struct sockaddr_in peer;

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void send_state(float angle, uint32_t buttons) {
    uint32_t a, packet[2];
    memcpy(&a, &angle, 4);
    packet[0] = htonl(a);
    packet[1] = htonl(buttons);
    sendto(sock, packet, 8, 0, (struct sockaddr *)&peer, sizeof peer);
}

static int parse_buttons(const char *text, uint32_t *out) {
    char *end;
    if (!strcasecmp(text, "none")) { *out = 0; return 1; }
    errno = 0;
    unsigned long v = strncasecmp(text, "0x", 2) == 0 ? strtoul(text + 2, &end, 16) : strtoul(text, &end, 10);
    if (end != text && *end == 0 && errno == 0 && v <= 0xffffffffUL && text[0] != '-' && text[0] != '+') { *out = v; return 1; }
    *out = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save, *part = strtok_r(copy, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
        int found = 0;
        for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
            if (!strcasecmp(part, names[i])) { *out |= 1u << i; found = 1; }
        if (!found) return 0;
    }
    return text[0] && text[strlen(text) - 1] != '+' && !strstr(text, "++") && text[0] != '+';
}

/* 1: a state; 0: blank or comment; -1: bad line. */
static int parse_line(char *line, float *angle, uint32_t *buttons) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *f[3] = {0};
    int n = 0;
    for (char *save, *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n == 3) return -1;
        f[n++] = t;
    }
    if (n == 0) return 0;
    if (n > 2) return -1;
    char *end;
    *angle = strtof(f[0], &end);
    if (*end || end == f[0] || !isfinite(*angle) || fabsf(*angle) > 1.5707964f) return -1;
    *buttons = 0;
    return n == 1 || parse_buttons(f[1], buttons) ? 1 : -1;
}

int main(int argc, char **argv) {
    char *colon = argc == 2 ? strrchr(argv[1], ':') : NULL;
    if (!colon) { fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]); return 2; }
    *colon = 0;
    peer.sin_family = AF_INET;
    peer.sin_port = htons(atoi(colon + 1));
    if (inet_pton(AF_INET, argv[1], &peer.sin_addr) != 1) { fprintf(stderr, "bad address %s\n", argv[1]); return 2; }
    sock = socket(AF_INET, SOCK_DGRAM, 0);
    float angle = 0;
    uint32_t buttons = 0;
    send_state(angle, buttons);
    int64_t sent = now_ms();
    char buf[8192];
    size_t have = 0, number = 0;
    struct pollfd in = {STDIN_FILENO, POLLIN, 0};
    for (;;) {
        int wait = (int)(sent + 20 - now_ms());
        int rc = poll(&in, 1, wait < 0 ? 0 : wait);
        if (rc == 0) { send_state(angle, buttons); sent = now_ms(); continue; }
        if (rc < 0) continue;
        ssize_t got = read(STDIN_FILENO, buf + have, sizeof buf - 1 - have);
        if (got <= 0) break;
        have += got;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', buf + have - start))) {
            *nl = 0;
            number++;
            float a;
            uint32_t b;
            int ok = parse_line(start, &a, &b);
            if (ok < 0) fprintf(stderr, "stdin:%zu: bad line, skipped\n", number);
            if (ok > 0 && (a != angle || b != buttons || signbit(a) != signbit(angle))) {
                angle = a;
                buttons = b;
                send_state(angle, buttons);
                sent = now_ms();
            }
            start = nl + 1;
        }
        have -= start - buf;
        memmove(buf, start, have);
        if (have == sizeof buf - 1) have = 0; /* a line too long: dropped */
    }
    for (int i = 0; i < 3; i++) send_state(0, 0);
    return 0;
}
