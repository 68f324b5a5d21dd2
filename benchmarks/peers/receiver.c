/* The C reference receiver: UDP state packets in, `W` lines out to the board's serial port.
 * Usage: peer-receiver BOARD_TTY [PORT]   (PORT 0 takes any free port; default 27183)
 * One poll for the socket and the board, then recvmmsg drains up to 64 datagrams; the latest
 * valid state of the batch is mapped (the motors profile's defaults, Protocol.md 3.4) and only
 * bytes that changed are written, one W per run of neighbouring addresses, as the reference
 * receiver does. No failsafe, no ownership: the floor for the same job, not a safe receiver. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

enum { BATCH = 64, N = 4 };
static const uint8_t address[N] = {0x0f, 0x10, 0x22, 0x23}; /* LED1 (A), LED2 (B), left, right */

static int wheel(double v) { /* round half away from zero, then clamp */
    double r = round(v);
    return (int)(r > 127 ? 127 : r < -127 ? -127 : r);
}

static void map(float angle, uint32_t buttons, uint8_t out[N]) {
    const double dead = 0.05f, lock = (float)(M_PI / 4);
    double m = fabs((double)angle), s = m <= dead ? 0 : fmin(1, (m - dead) / (lock - dead));
    if (angle < 0) s = -s;
    int fwd = buttons & 1, back = (buttons >> 1) & 1;
    double t = fwd == back ? 0 : fwd ? 1 : -1;
    int left = wheel(64 * (t + s)), right = wheel(64 * (t - s));
    out[0] = buttons & 4 ? 255 : 0;
    out[1] = buttons & 8 ? 255 : 0;
    out[2] = (uint8_t)(-left); /* mounted mirrored */
    out[3] = (uint8_t)right;
}

static void on_term(int sig) { (void)sig; _exit(0); }

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s BOARD_TTY [PORT]\n", argv[0]); return 2; }
    signal(SIGTERM, on_term);
    int board = open(argv[1], O_RDWR | O_NOCTTY);
    if (board < 0) { perror(argv[1]); return 1; }
    struct termios tio;
    if (tcgetattr(board, &tio) == 0) { cfmakeraw(&tio); tcsetattr(board, TCSANOW, &tio); }
    int sock = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons(argc > 2 ? atoi(argv[2]) : 27183)};
    socklen_t len = sizeof me;
    if (sock < 0 || bind(sock, (struct sockaddr *)&me, sizeof me) < 0) { perror("bind"); return 1; }
    getsockname(sock, (struct sockaddr *)&me, &len);
    printf("receiving on udp port %d\n", ntohs(me.sin_port));
    fflush(stdout);

    static uint8_t buf[BATCH][16], junk[4096];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    for (int i = 0; i < BATCH; i++) {
        iov[i] = (struct iovec){buf[i], sizeof buf[i]};
        msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
    }
    uint8_t last[N] = {0}, now[N]; /* the board starts at rest */
    struct pollfd fds[2] = {{sock, POLLIN, 0}, {board, POLLIN, 0}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) continue;
        if (fds[1].revents) (void)!read(board, junk, sizeof junk); /* echo, reply, prompt */
        if (!(fds[0].revents & POLLIN)) continue;
        int n = recvmmsg(sock, msgs, BATCH, MSG_DONTWAIT, NULL), got = 0;
        for (int i = 0; i < n; i++) { /* latest valid state of the batch wins */
            if (msgs[i].msg_len != 8) continue;
            uint32_t a, b;
            memcpy(&a, buf[i], 4);
            memcpy(&b, buf[i] + 4, 4);
            a = ntohl(a);
            b = ntohl(b);
            float angle;
            memcpy(&angle, &a, 4);
            if (!isfinite(angle)) continue;
            map(angle, b, now);
            got = 1;
        }
        if (!got) continue;
        char line[64];
        for (int i = 0; i < N;) {
            if (now[i] == last[i]) { i++; continue; }
            int k = snprintf(line, sizeof line, "W %02x ", address[i]);
            int j = i;
            do { k += snprintf(line + k, sizeof line - k, "%02x", now[j]); j++; }
            while (j < N && now[j] != last[j] && address[j] == address[j - 1] + 1);
            line[k++] = '\n';
            (void)!write(board, line, k);
            i = j;
        }
        memcpy(last, now, N);
    }
}
