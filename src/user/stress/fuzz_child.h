/* The child side of ut_fuzz (fuzz_child.c): what the driver needs to set
 * it up and to run one child. */
#ifndef TOLL_FUZZ_CHILD_H
#define TOLL_FUZZ_CHILD_H
#include <stdint.h>

/* Notes where this program's image, stack and (on i386) segments are, with
 * user space ending at @user_limit, and maps the arena the hostile pointers
 * aim into. Call once, before any child; 0 if the arena cannot be mapped. */
int fuzz_setup(unsigned long user_limit);

/* How many calls the children have started so far, all together: the
 * driver's measure of a child's progress (a child that execs another
 * program, or sleeps, stops adding to it). */
unsigned long fuzz_progress(void);

/* How many implemented calls the kernel's table holds. */
unsigned fuzz_call_count(void);

/* Child @child of @seed: makes @calls system calls, printing each first when
 * @verbose, then exits. Never returns. */
void fuzz_child(uint64_t seed, long child, long calls, int verbose) __attribute__((noreturn));

#endif
