// libFuzzer's driver, for `analog-remote-fuzz`: the executable keeps its own `main` and hands
// control to libFuzzer through LLVMFuzzerRunDriver (libclang_rt.fuzzer_no_main, linked only by
// scripts/fuzz.sh). Declared weak so that the ordinary build, which does not link libFuzzer,
// still links: there CLibFuzzer_available() is 0.
#include <stddef.h>
#include <stdint.h>

extern int LLVMFuzzerRunDriver(int *argc, char ***argv,
                               int (*callback)(const uint8_t *data, size_t size)) __attribute__((weak));

static inline int CLibFuzzer_available(void) { return LLVMFuzzerRunDriver != 0; }

static inline int CLibFuzzer_run(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t)) {
    return LLVMFuzzerRunDriver(argc, argv, callback);
}
