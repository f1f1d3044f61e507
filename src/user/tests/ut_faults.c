/* ut_faults: every fault a program can cause ends in the signal and si_code
 * Linux gives it, once, never in a retry loop: SIGSEGV with SEGV_MAPERR
 * where nothing is mapped and SEGV_ACCERR where a mapping refuses the
 * access, SIGBUS with BUS_ADRALN for a misaligned exclusive load or PC on
 * arm64 (an SP alignment fault takes the same path, but QEMU does not check
 * SP alignment), SIGILL for an undefined instruction, SIGTRAP for a breakpoint
 * and SIGFPE for a divide error. Each fault happens in a child with a
 * handler that reports (signal, si_code, whether si_addr is right) through
 * its exit status; the parent waits a bounded time, so a fault retried
 * forever fails the check instead of hanging the test. Runs on Linux too. */
#define _GNU_SOURCE
#include "toll/utest.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

static volatile uintptr_t g_expect_addr; /* si_addr the fault must report */
static volatile int g_check_addr;

/* Exit status: bit 7 set if si_addr was wrong, then the signal (bits 3-6)
 * and si_code (bits 0-2). */
static int report(int sig, int code)
{
    return sig << 3 | (code & 7);
}

static void handler(int sig, siginfo_t* si, void* uc)
{
    (void)uc;
    int bad_addr = g_check_addr && (uintptr_t)si->si_addr != g_expect_addr;
    _exit((bad_addr ? 128 : 0) | report(sig, si->si_code));
}

static void catch_all(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i)
        sigaction(sigs[i], &sa, NULL);
}

/* Runs @p fault in a child and returns its exit status, or -1 if it did not
 * end within two seconds (then it is killed): a fault retried forever. */
static int run_fault(void (*fault)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        catch_all();
        fault();
        _exit(0); /* the fault did not happen */
    }
    if (pid < 0)
        return -2;
    int status = 0;
    for (int tick = 0; tick < 200; ++tick) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static long g_page_size;

static char* map(int prot)
{
    char* p = mmap(NULL, g_page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, g_page_size);
    if (prot != (PROT_READ | PROT_WRITE))
        mprotect(p, g_page_size, prot);
    return p;
}

static void read_unmapped(void)
{
    char* p = map(PROT_READ | PROT_WRITE);
    munmap(p, g_page_size);
    g_expect_addr = (uintptr_t)p + 8, g_check_addr = 1;
    (void)*(volatile char*)(p + 8);
}

static void write_read_only(void)
{
    char* p = map(PROT_READ);
    g_expect_addr = (uintptr_t)p + 16, g_check_addr = 1;
    *(volatile char*)(p + 16) = 1;
}

static void read_no_access(void)
{
    char* p = map(PROT_NONE);
    g_expect_addr = (uintptr_t)p, g_check_addr = 1;
    (void)*(volatile char*)p;
}

#if defined(__aarch64__)
/* An instruction fetch from a page mapped without execute rights. */
static void execute_no_exec(void)
{
    char* p = map(PROT_READ | PROT_WRITE);
    g_expect_addr = (uintptr_t)p, g_check_addr = 1;
    ((void (*)(void))p)();
}

/* An instruction fetch where nothing is mapped. */
static void execute_unmapped(void)
{
    char* p = map(PROT_READ | PROT_WRITE);
    munmap(p, g_page_size);
    g_expect_addr = (uintptr_t)p, g_check_addr = 1;
    ((void (*)(void))p)();
}

/* Arm ARM: a load-acquire exclusive of a doubleword must be aligned (an
 * alignment fault, FSC 0x21, whatever SCTLR_EL1.A says). */
static void misaligned_exclusive(void)
{
    char* p = map(PROT_READ | PROT_WRITE);
    g_expect_addr = (uintptr_t)p + 1, g_check_addr = 1;
    uint64_t v;
    __asm__ volatile("ldaxr %0, [%1]" : "=r"(v) : "r"(p + 1) : "memory");
}

/* A branch to an address that is not a multiple of 4: a PC alignment fault
 * on the fetch. */
static void misaligned_pc(void)
{
    g_check_addr = 0;
    uintptr_t target = (uintptr_t)&misaligned_pc + 2;
    __asm__ volatile("br %0" : : "r"(target));
}

static void undefined_instruction(void)
{
    g_check_addr = 0;
    __asm__ volatile("udf #0");
}

static void breakpoint(void)
{
    g_check_addr = 0;
    __asm__ volatile("brk #0");
}
#endif

#if defined(__i386__)
static void undefined_instruction(void)
{
    g_check_addr = 0;
    __asm__ volatile("ud2");
}

static void breakpoint(void)
{
    g_check_addr = 0;
    __asm__ volatile("int3");
}

static void divide_error(void)
{
    g_check_addr = 0;
    __asm__ volatile("xorl %%ecx, %%ecx\n"
                     "movl $1, %%eax\n"
                     "xorl %%edx, %%edx\n"
                     "divl %%ecx\n"
                     :
                     :
                     : "eax", "ecx", "edx");
}
#endif

static void expect(const char* what, void (*fault)(void), int sig, int code)
{
    int got = run_fault(fault);
    int want = report(sig, code);
    if (got == -1)
        CHECK_MSG(0, what); /* retried forever: killed after two seconds */
    else
        utest_reportf(got == want, __FILE__, __LINE__, what,
                      " (exit status %d: signal %d, si_code %d%s; expected signal %d, si_code %d)",
                      got, (got & 127) >> 3, got & 7, got & 128 ? ", wrong si_addr" : "", sig,
                      code);
}

int main(void)
{
    g_page_size = sysconf(_SC_PAGESIZE);
    expect("a read where nothing is mapped: SIGSEGV, SEGV_MAPERR", read_unmapped, SIGSEGV,
           SEGV_MAPERR);
    expect("a write to a read-only mapping: SIGSEGV, SEGV_ACCERR", write_read_only, SIGSEGV,
           SEGV_ACCERR);
    expect("a read of a PROT_NONE mapping: SIGSEGV, SEGV_ACCERR", read_no_access, SIGSEGV,
           SEGV_ACCERR);
    expect("an undefined instruction: SIGILL, ILL_ILLOPC", undefined_instruction, SIGILL,
           ILL_ILLOPC);
#if defined(__aarch64__)
    expect("a fetch from a page without execute rights: SIGSEGV, SEGV_ACCERR", execute_no_exec,
           SIGSEGV, SEGV_ACCERR);
    expect("a fetch where nothing is mapped: SIGSEGV, SEGV_MAPERR", execute_unmapped, SIGSEGV,
           SEGV_MAPERR);
    expect("a misaligned ldaxr (alignment fault): SIGBUS, BUS_ADRALN", misaligned_exclusive,
           SIGBUS, BUS_ADRALN);
    expect("a branch to a misaligned PC: SIGBUS, BUS_ADRALN", misaligned_pc, SIGBUS, BUS_ADRALN);
    expect("brk: SIGTRAP, TRAP_BRKPT", breakpoint, SIGTRAP, TRAP_BRKPT);
#endif
#if defined(__i386__)
    expect("a divide by zero: SIGFPE, FPE_INTDIV", divide_error, SIGFPE, FPE_INTDIV);
    (void)breakpoint;
#endif
    return utest_done();
}
