/* fpu_iso: register isolation between processes. A loads a pattern into
 * every x87, MMX and SSE register and MXCSR, then blocks; B, a fresh program
 * (fork + exec), saves its registers before anything else and must find
 * only the initial state; B then loads a pattern of its own and exits, and A
 * must find its own pattern intact. A kernel that does not switch the FPU
 * (or restores the wrong image) fails one of the two checks.
 * Usage: fpu_iso [A B]      (runs A, which starts B)
 * A and B are the seeds of the two patterns (1 to 255, different; 0x21 and
 * 0x5C by default): the grader draws its own, so that no kernel can know
 * the values it must keep apart. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

#include "fpu_user.h"

static struct FxImage g_mine, g_seen;

/* B: waits for A's go, then looks at its registers first thing. Writes one
 * byte to A: 0 if it saw the initial state, else 1 + the offset / 16. */
static int reader(int go_fd, int answer_fd, uint8_t seed)
{
    char token;
    if (read(go_fd, &token, 1) != 1)
        return 2;
    fpu_save(&g_seen); /* the first FPU instruction of this program */
    struct FxImage initial;
    fpu_initial(&initial);
    int diff = fpu_compare_registers(&g_seen, &initial);
    fpu_pattern(&g_mine, seed); /* now scribble over everything */
    fpu_load(&g_mine);
    unsigned char answer = diff < 0 ? 0 : (unsigned char)(1 + diff / 16);
    return write(answer_fd, &answer, 1) == 1 ? 0 : 3;
}

int main(int argc, char** argv)
{
    if (argc == 5 && strcmp(argv[1], "reader") == 0)
        return reader(atoi(argv[2]), atoi(argv[3]), (uint8_t)atoi(argv[4]));
    int seed_a = 0x21, seed_b = 0x5C;
    if (argc == 3) {
        seed_a = atoi(argv[1]);
        seed_b = atoi(argv[2]);
    }
    if (!CHECK_MSG(seed_a >= 1 && seed_a <= 255 && seed_b >= 1 && seed_b <= 255 &&
                       seed_a != seed_b,
                   "the two pattern seeds are 1 to 255 and differ"))
        return utest_done();
    int go[2], answer[2];
    if (!CHECK(pipe(go) == 0 && pipe(answer) == 0))
        return utest_done();
    pid_t pid = fork();
    if (pid == 0) {
        char go_fd[16], answer_fd[16], seed[16];
        snprintf(go_fd, sizeof go_fd, "%d", go[0]);
        snprintf(answer_fd, sizeof answer_fd, "%d", answer[1]);
        snprintf(seed, sizeof seed, "%d", seed_b);
        execl("/bin/fpu_iso", "fpu_iso", "reader", go_fd, answer_fd, seed, (char*)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    fpu_pattern(&g_mine, (uint8_t)seed_a);
    fpu_load(&g_mine); /* A's registers: the pattern */
    unsigned char reply = 0xFF;
    if (write(go[1], "g", 1) != 1 || read(answer[0], &reply, 1) != 1)
        reply = 0xFE; /* B blocked us in read(): a switch to B and back */
    fpu_save(&g_seen);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_EQ(status, 0);
    if (reply != 0)
        utest_line("# B saw a register of A's or garbage at FXSAVE offset %d",
                   reply >= 0xFE ? -1 : (reply - 1) * 16);
    CHECK_MSG(reply == 0, "a fresh process sees only the initial FPU state");
    int diff = fpu_compare_registers(&g_seen, &g_mine);
    if (diff >= 0)
        utest_line("# A's registers changed at FXSAVE offset %d", diff);
    CHECK_MSG(diff < 0, "a process's FPU registers survive another process's use of the FPU");
    unsigned long long traps = 0;
    if (counter_get("fpu.dna_traps", &traps) == 0)
        utest_line("# fpu.dna_traps = %llu", traps);
    return utest_done();
}
