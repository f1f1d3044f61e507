/* fpu_leak: the FXSAVE pointer leak of FreeBSD-SA-06:14. A loads an x87
 * operand from a known address at a known instruction, so FOP, FIP and FDP
 * name them, then blocks; B, a fresh program (fork + exec of the same
 * binary, so the addresses are the same in both), runs FXSAVE first thing
 * and reports the pointers it finds:
 *   leak    FIP and FDP are A's instruction and datum: the leak
 *   kernel  they point into the kernel: the kernel's cleaning load
 *   zero    both are 0: the emulator does not record them (QEMU)
 * Usage: fpu_leak expect=leak|clean. Exit status 0 when B saw what was
 * expected, 77 (skipped) when the pointers read as zero, 1 otherwise.
 * With fpu.leak=simulate the kernel restores as an AMD K7/K8 does; run
 * under Bochs, which records the pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpu_user.h"

enum { k_exit_skip = 77, k_kernel_base = 0xC0000000u };
enum Seen { seen_leak = 'L', seen_kernel = 'K', seen_zero = 'Z', seen_other = 'O' };

/* A's x87 load: its address is the label, its operand g_secret. */
static const int g_secret = 0x5ec7e7;
extern const char fpu_leak_load_site[];

static void load_secret(void)
{
    __asm__ volatile("fninit\n\t"
                     ".globl fpu_leak_load_site\n"
                     "fpu_leak_load_site:\n\t"
                     "fildl %0"
                     :
                     : "m"(g_secret));
}

static struct FxImage g_seen;

static int reader(int go_fd, int answer_fd)
{
    char token;
    if (read(go_fd, &token, 1) != 1)
        return 2;
    fpu_save(&g_seen); /* B's first FPU instruction */
    char seen = seen_other;
    if (g_seen.fip == (uint32_t)(uintptr_t)fpu_leak_load_site &&
        g_seen.fdp == (uint32_t)(uintptr_t)&g_secret)
        seen = seen_leak;
    else if (g_seen.fip >= k_kernel_base && g_seen.fdp >= k_kernel_base)
        seen = seen_kernel;
    else if (g_seen.fip == 0 && g_seen.fdp == 0 && g_seen.fop == 0)
        seen = seen_zero;
    char answer[64];
    int n = snprintf(answer, sizeof answer, "%c fop=%04x fip=%08x fdp=%08x", seen, g_seen.fop,
                     g_seen.fip, g_seen.fdp);
    return write(answer_fd, answer, (size_t)n) == n ? 0 : 3;
}

int main(int argc, char** argv)
{
    if (argc == 4 && strcmp(argv[1], "reader") == 0)
        return reader(atoi(argv[2]), atoi(argv[3]));
    const char* expect = argc == 2 ? argv[1] : "";
    if (strcmp(expect, "expect=leak") != 0 && strcmp(expect, "expect=clean") != 0) {
        fprintf(stderr, "usage: fpu_leak expect=leak|clean\n");
        return 2;
    }
    int go[2], answer[2];
    if (pipe(go) != 0 || pipe(answer) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        char go_fd[16], answer_fd[16];
        snprintf(go_fd, sizeof go_fd, "%d", go[0]);
        snprintf(answer_fd, sizeof answer_fd, "%d", answer[1]);
        execl("/bin/fpu_leak", "fpu_leak", "reader", go_fd, answer_fd, (char*)NULL);
        _exit(127);
    }
    if (pid < 0)
        return 1;
    load_secret();
    char reply[64] = {0};
    if (write(go[1], "g", 1) != 1 || read(answer[0], reply, sizeof reply - 1) <= 0)
        reply[0] = '?';
    int status = 0;
    waitpid(pid, &status, 0);
    printf("A: load at %p from %p; B's first FXSAVE: %s\n", (void*)fpu_leak_load_site,
           (void*)&g_secret, reply + 1);
    if (reply[0] == seen_zero) {
        printf("skip: FXSAVE stored zero FOP/FIP/FDP: this emulator (QEMU) does not record "
               "the x87 pointers, so no leak can be seen\n");
        return k_exit_skip;
    }
    int want_leak = strcmp(expect, "expect=leak") == 0;
    int ok = want_leak ? reply[0] == seen_leak : reply[0] == seen_kernel;
    printf("%s: B %s\n", ok ? "ok" : "not ok",
           reply[0] == seen_leak     ? "saw A's instruction and data pointers (the leak)"
           : reply[0] == seen_kernel ? "saw the kernel's cleaning load, not A's pointers"
                                     : "saw pointers that are neither A's nor the kernel's");
    return ok && status == 0 ? 0 : 1;
}
