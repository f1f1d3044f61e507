/* The children of ut_attack that forge what the kernel restores into a user
 * frame: on i386 the TLS segment (set_thread_area) pulled from under live
 * segment registers, sigreturn frames with kernel selectors, IOPL, a bad
 * MXCSR or a kernel FPU-state pointer, and an iret into vm86 mode; on arm64
 * a sigreturn frame whose PSTATE asks for EL1. Each runs in a child of its
 * own and says how it went by its exit status (or dies of a signal); the
 * parent (ut_attack.c) checks the outcome. No check is made here: a child's
 * check would be counted in the child's copy of the counters. */
#define _GNU_SOURCE
#include "attack_frames.h"
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__i386__)

struct user_desc {
    unsigned int entry_number, base_addr, limit, flags;
};
enum {
    k_32bit = 1,
    k_code = 2 << 1,
    k_read_exec_only = 1 << 3,
    k_pages = 1 << 4,
    k_not_present = 1 << 5
};

/* System calls without libc: once the TLS segment changes, musl's errno
 * (reached through %gs) may be gone. */
static long raw1(long n, long a)
{
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a) : "memory");
    return r;
}
#define RAW_EXIT(code) raw1(1, (code))

static unsigned tls_selector(void)
{
    unsigned gs;
    __asm__ volatile("movl %%gs, %0" : "=r"(gs));
    return gs;
}

static long set_tls(unsigned entry, unsigned base, unsigned limit, unsigned flags)
{
    struct user_desc d = {entry, base, limit, flags};
    return raw1(243, (long)&d);
}

void tls_refusals(void)
{
    unsigned e = tls_selector() >> 3;
    int bad = 0;
    bad |= set_tls(e, 0, 0xFFFFF, k_32bit | k_pages | k_not_present) != -EINVAL;
    bad |= (set_tls(e, 0, 0xFFFFF, k_32bit | k_pages | k_code) != -EINVAL) << 1;
    bad |= (set_tls(e, 0, 0xFFFFF, k_pages) != -EINVAL) << 2;  /* 16-bit */
    bad |= (set_tls(e, 0, 0x100000, k_32bit) != -EINVAL) << 3; /* 21-bit limit */
    RAW_EXIT(bad);
}

static char g_tls_bytes[8192] __attribute__((aligned(4096)));

static unsigned segment_limit(unsigned sel)
{
    unsigned limit = 0;
    __asm__ volatile("lsl %1, %0" : "+r"(limit) : "r"(sel) : "cc");
    return limit;
}

/* Limits are kept as asked: 16 bytes is a limit of 15, not a page. LSL
 * reads the limit the descriptor holds (QEMU does not check data segment
 * limits, so a read past it would prove nothing there). */
void tls_exact_limit(void)
{
    unsigned sel = tls_selector();
    if (set_tls(sel >> 3, (unsigned)g_tls_bytes, 15, k_32bit) != 0)
        RAW_EXIT(2);
    if (segment_limit(sel) != 15)
        RAW_EXIT(3);
    if (set_tls(sel >> 3, (unsigned)g_tls_bytes, 2, k_32bit | k_pages) != 0)
        RAW_EXIT(4);
    RAW_EXIT(segment_limit(sel) == 3 * 4096 - 1 ? 0 : 5);
}

/* SS holds the TLS selector when the slot is emptied: the kernel's exit
 * path cannot restore SS, so the program gets SIGSEGV (not the kernel). */
void tls_pulled_from_under_ss(void)
{
    unsigned sel = tls_selector();
    if (set_tls(sel >> 3, 0, 0xFFFFF, k_32bit | k_pages) != 0)
        RAW_EXIT(2);
    struct user_desc empty = {sel >> 3, 0, 0, k_read_exec_only | k_not_present};
    long r;
    __asm__ volatile("movl %%ss, %%esi\n\t"
                     "movl %2, %%ss\n\t"
                     "int $0x80\n\t"
                     "movl %%esi, %%ss"
                     : "=a"(r)
                     : "a"(243L), "r"(sel), "b"(&empty)
                     : "esi", "memory");
    RAW_EXIT(3);
}

/* DS, ES, FS hold it: they come back null, and the program goes on. */
void tls_pulled_from_under_ds(void)
{
    unsigned sel = tls_selector();
    if (set_tls(sel >> 3, 0, 0xFFFFF, k_32bit | k_pages) != 0)
        RAW_EXIT(2);
    struct user_desc empty = {sel >> 3, 0, 0, 0};
    unsigned ds, es, fs;
    __asm__ volatile("movl %%ds, %%esi\n\t"
                     "movl %3, %%es\n\t"
                     "movl %3, %%fs\n\t"
                     "movl $243, %%eax\n\t"
                     "int $0x80\n\t"
                     "movl %%es, %1\n\t"
                     "movl %%fs, %2\n\t"
                     "movl %%esi, %%ds\n\t" /* ds was not touched: still the user's */
                     "movl %%ds, %0"
                     : "=r"(ds), "=r"(es), "=r"(fs)
                     : "r"(sel), "b"(&empty)
                     : "eax", "esi", "memory");
    RAW_EXIT(es == 0 && fs == 0 && ds != 0 ? 0 : 3);
}

/* A null %ds and %es are legal in user mode: a system call made with them
 * must not use them in the kernel's entry or exit (which would fault in
 * kernel mode on a CPU that checks, as Bochs does), and they come back. */
void null_data_segments_at_syscall(void)
{
    unsigned ds, es;
    long r;
    __asm__ volatile("movl %%ds, %%esi\n\t"
                     "xorl %%edx, %%edx\n\t"
                     "movl %%edx, %%ds\n\t"
                     "movl %%edx, %%es\n\t"
                     "movl $20, %%eax\n\t" /* getpid */
                     "int $0x80\n\t"
                     "movl %%ds, %1\n\t"
                     "movl %%es, %2\n\t"
                     "movl %%esi, %%ds\n\t"
                     "movl %%esi, %%es"
                     : "=a"(r), "=r"(ds), "=r"(es)
                     :
                     : "edx", "esi", "memory");
    RAW_EXIT(r > 0 && ds == 0 && es == 0 ? 0 : 3);
}

/* Forged rt_sigreturn frames: struct rt_sigframe with its ucontext's
 * sigcontext at byte 144 + 20, the mask after it. */
enum { k_sc = 164, k_sc_words = 22 };
enum {
    SC_GS,
    SC_FS,
    SC_ES,
    SC_DS,
    SC_EDI,
    SC_ESI,
    SC_EBP,
    SC_ESP,
    SC_EBX,
    SC_EDX,
    SC_ECX,
    SC_EAX,
    SC_TRAPNO,
    SC_ERR,
    SC_EIP,
    SC_CS,
    SC_EFLAGS,
    SC_ESP2,
    SC_SS,
    SC_FPSTATE,
    SC_OLDMASK,
    SC_CR2
};

void resume_segments(void);
void resume_cli(void);
void resume_exit0(void);
void resume_sse(void);
__asm__(".text\n"
        "resume_segments:\n" /* exit status: ds | es | fs | gs, 0 if all are null */
        "  xorl %ebx, %ebx\n"
        "  movl %ds, %eax\n  orl %eax, %ebx\n"
        "  movl %es, %eax\n  orl %eax, %ebx\n"
        "  movl %fs, %eax\n  orl %eax, %ebx\n"
        "  movl $1, %eax\n  int $0x80\n"
        "resume_cli:\n" /* IOPL 0: cli faults (SIGSEGV); otherwise exit 3 */
        "  cli\n"
        "  movl $1, %eax\n  movl $3, %ebx\n  int $0x80\n"
        "resume_exit0:\n"
        "  movl $1, %eax\n  xorl %ebx, %ebx\n  int $0x80\n"
        "resume_sse:\n" /* uses the FPU state sigreturn restored, then exit 0 */
        "  addps %xmm1, %xmm1\n"
        "  stmxcsr -4(%esp)\n"
        "  movl $1, %eax\n  xorl %ebx, %ebx\n  int $0x80\n");

static uint32_t g_frame[1024] __attribute__((aligned(64)));
static uint8_t g_fpstate[624 + 64] __attribute__((aligned(64)));
static uint32_t g_stack[256];

static void forge_sigreturn(uint32_t* sc)
{
    memcpy((char*)g_frame + k_sc, sc, k_sc_words * 4);
    /* The restorer ran: esp is 4 past the frame (pretcode popped). */
    __asm__ volatile("movl %0, %%esp\n\tmovl $173, %%eax\n\tint $0x80"
                     :
                     : "r"(g_frame + 1)
                     : "eax");
    RAW_EXIT(99);
}

static void base_context(uint32_t* sc, void (*resume)(void))
{
    memset(sc, 0, k_sc_words * 4);
    unsigned ds;
    __asm__ volatile("movl %%ds, %0" : "=r"(ds));
    sc[SC_DS] = sc[SC_ES] = sc[SC_SS] = ds;
    sc[SC_GS] = tls_selector();
    sc[SC_CS] = 0x1B;
    sc[SC_EIP] = (uint32_t)resume;
    sc[SC_ESP] = (uint32_t)(g_stack + 200);
    sc[SC_EFLAGS] = 0x202;
}

void forged_bad_data_segments(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_segments);
    sc[SC_DS] = 0x08;   /* the kernel's code segment */
    sc[SC_ES] = 0xFFFF; /* past the GDT */
    sc[SC_FS] = 0x0F;   /* an LDT selector: there is no LDT */
    forge_sigreturn(sc);
}

void forged_iopl(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_cli);
    sc[SC_EFLAGS] = 0x202 | 0x3000 /* IOPL 3 */ | 0x20000 /* VM */ | 0x80000 /* VIF */;
    forge_sigreturn(sc);
}

void forged_kernel_cs(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_exit0);
    sc[SC_CS] = 0x08;
    forge_sigreturn(sc);
}

void forged_kernel_ss(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_exit0);
    sc[SC_SS] = 0x10;
    forge_sigreturn(sc);
}

void forged_mxcsr(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_sse);
    memset(g_fpstate, 0, sizeof g_fpstate);
    uint32_t mxcsr = 0xFFFFFFFF; /* every reserved bit set: FXRSTOR would #GP */
    memcpy(g_fpstate + 112 + 24, &mxcsr, 4);
    sc[SC_FPSTATE] = (uint32_t)g_fpstate;
    forge_sigreturn(sc);
}

void forged_kernel_fpstate(void)
{
    uint32_t sc[k_sc_words];
    base_context(sc, resume_exit0);
    sc[SC_FPSTATE] = 0xC0100000;
    forge_sigreturn(sc);
}

void resume_vm86_refused(void);
__asm__(".text\nresume_vm86_refused:\n  movl $1, %eax\n  movl $42, %ebx\n  int $0x80\n");

/* iret with EFLAGS.VM (and IOPL 3, IF clear) from ring 3. A CPU ignores VM
 * there; QEMU enters virtual-8086 mode, where nothing is mapped to run. */
void iret_to_vm86(void)
{
    uint32_t frame[9] = {(uint32_t)resume_vm86_refused,
                         0x1B,
                         0x20000 | 0x3000 | 0x2,
                         (uint32_t)(g_stack + 200),
                         0x23,
                         0,
                         0,
                         0,
                         0};
    __asm__ volatile("movl %0, %%esp\n\tiret" : : "r"(frame) : "memory");
}

#elif defined(__aarch64__)

void resume_at_el0(void);
__asm__(".text\nresume_at_el0:\n"
        "  mrs x0, CurrentEL\n" /* UNDEFINED at EL0: SIGILL */
        "  mov x0, #3\n  mov x8, #93\n  svc #0\n");

static uint64_t g_frame[1024] __attribute__((aligned(16)));
static uint64_t g_stack[256] __attribute__((aligned(16)));

/* struct rt_sigframe: siginfo (128), ucontext: sigcontext at 128 + 176,
 * its reserved area (fpsimd record first) 288 bytes further. */
static void forge_el1(int with_fpsimd)
{
    uint8_t* f = (uint8_t*)g_frame;
    memset(g_frame, 0, sizeof g_frame);
    uint64_t* sc = (uint64_t*)(f + 304);
    sc[1 + 31] = (uint64_t)(g_stack + 200); /* sp */
    sc[1 + 32] = (uint64_t)resume_at_el0;   /* pc */
    sc[1 + 33] = 0x3C5;                     /* EL1h, DAIF masked */
    if (with_fpsimd) {
        uint32_t head[2] = {0x46508001, 528};
        memcpy(f + 592, head, sizeof head);
    }
    __asm__ volatile("mov sp, %0\n\tmov x8, #139\n\tsvc #0" : : "r"(g_frame) : "x8", "memory");
}

void forged_el1(void)
{
    forge_el1(1);
}

void forged_no_fpsimd(void)
{
    forge_el1(0);
}

#endif
