/* ut_exhaust: run the kernel out of memory, then out of processes, and check
 * that it refuses cleanly (ENOMEM, EAGAIN), gives everything back when the
 * owners let go, and still works afterwards. Both are capped so that on Linux
 * this test does not eat the host: Toll's machine (128 MB) runs dry long
 * before the caps. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_chunk = 1024 * 1024,    /* memory is taken 1 MB at a time */
    k_memory_cap_mb = 512,    /* stop there, refused or not */
    k_address_limit_mb = 256, /* RLIMIT_AS, so that Linux refuses too */
    k_min_memory_mb = 16,     /* less than this is no machine at all */
    k_fork_cap = 200,         /* stop there, refused or not */
    k_min_forks = 16,
    k_status_remap_failed = 3, /* the child could not map again what it unmapped */
};

static long g_page; /* the page size, from the kernel (AT_PAGESZ) */

/* How a round of memory grabbing ended. */
struct Grab {
    int megabytes; /* how much was mapped and touched */
    int error;     /* errno of the refused mmap; 0 at the cap */
    int status;    /* the child's wait status */
};

/* Write to every page of a chunk, so that a kernel that maps lazily must
 * find the memory now. */
static void touch(char* chunk, int mark)
{
    for (int off = 0; off < k_chunk; off += g_page)
        chunk[off] = (char)mark;
}

/* In a child, map and touch 1 MB chunks until mmap fails or the cap is
 * reached, telling the parent the progress through a pipe; then unmap it all
 * and map it again. The child's exit frees everything once more. */
static struct Grab grab_memory(void)
{
    struct Grab g = {0, -1, -1};
    int fds[2];
    if (pipe(fds) != 0)
        return g;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        /* Linux overcommits and would let the cap be reached: an address
         * space limit makes it refuse as Toll does. (A kernel without
         * setrlimit just runs out of memory first.) */
        struct rlimit limit = {(rlim_t)k_address_limit_mb << 20, (rlim_t)k_address_limit_mb << 20};
        setrlimit(RLIMIT_AS, &limit);
        static char* chunks[k_memory_cap_mb];
        int got = 0;
        while (got < k_memory_cap_mb) {
            char* p =
                mmap(NULL, k_chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                int report = -errno;
                write(fds[1], &report, sizeof report);
                break;
            }
            touch(p, got);
            chunks[got++] = p;
            write(fds[1], &got, sizeof got);
        }
        close(fds[1]);
        /* Give it all back with munmap, then take the same amount again:
         * a kernel whose munmap loses frames cannot. */
        for (int i = 0; i < got; ++i)
            munmap(chunks[i], k_chunk);
        for (int i = 0; i < got; ++i) {
            char* p =
                mmap(NULL, k_chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                _exit(k_status_remap_failed);
            touch(p, i);
        }
        _exit(0);
    }
    close(fds[1]);
    int report;
    g.error = 0;
    while (read(fds[0], &report, sizeof report) == sizeof report) {
        if (report < 0)
            g.error = -report;
        else
            g.megabytes = report;
    }
    close(fds[0]);
    if (pid > 0)
        waitpid(pid, &g.status, 0);
    return g;
}

static void check_grab(struct Grab g, const char* round)
{
    char what[96];
    if (WIFSIGNALED(g.status)) {
        /* A kernel that maps lazily may have to kill instead of refusing. */
        NOTE("%s: killed by signal %d after %d MB", round, WTERMSIG(g.status), g.megabytes);
    } else if (g.error == 0) {
        NOTE("%s: reached the cap of %d MB without being refused", round, g.megabytes);
    } else {
        NOTE("%s: refused after %d MB", round, g.megabytes);
    }
    snprintf(what, sizeof what, "%s: after munmap of it all, as much can be mapped again", round);
    utest_reportf(WIFEXITED(g.status) && WEXITSTATUS(g.status) == 0, __FILE__, __LINE__, what,
                  "wait status 0x%x", g.status);
    snprintf(what, sizeof what, "%s: an mmap that is refused fails with ENOMEM", round);
    utest_reportf(g.error == 0 || g.error == ENOMEM, __FILE__, __LINE__, what, "errno %d (%s)",
                  g.error, strerror(g.error));
    snprintf(what, sizeof what, "%s: at least %d MB could be had", round, k_min_memory_mb);
    utest_reportf(g.megabytes >= k_min_memory_mb, __FILE__, __LINE__, what, "got %d MB",
                  g.megabytes);
}

/* Fork children that wait on a pipe until fork fails or the cap. Returns the
 * number forked; *@error gets the errno of the refused fork (0 at the cap).
 * All children are released and reaped before it returns; *@reaped_ok counts
 * those that were reaped with exit status 0. */
static int grab_processes(int* error, int* reaped_ok)
{
    static pid_t pids[k_fork_cap];
    int hold[2];
    *error = -1;
    *reaped_ok = 0;
    if (pipe(hold) != 0)
        return 0;
    int count = 0;
    *error = 0;
    while (count < k_fork_cap) {
        pid_t pid = fork();
        if (pid == 0) {
            char c;
            close(hold[1]);
            _exit(read(hold[0], &c, 1) == 0 ? 0 : 1); /* until end of file */
        }
        if (pid < 0) {
            *error = errno;
            break;
        }
        pids[count++] = pid;
    }
    close(hold[0]);
    close(hold[1]); /* release them all */
    for (int i = 0; i < count; ++i) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0)
            ++*reaped_ok;
    }
    return count;
}

static void check_processes(int count, int error, int reaped_ok, const char* round)
{
    char what[96];
    if (error == 0)
        NOTE("%s: reached the cap of %d children without being refused", round, count);
    else
        NOTE("%s: fork refused after %d children", round, count);
    snprintf(what, sizeof what, "%s: a refused fork fails with EAGAIN or ENOMEM", round);
    utest_reportf(error == 0 || error == EAGAIN || error == ENOMEM, __FILE__, __LINE__, what,
                  "errno %d (%s)", error, strerror(error));
    snprintf(what, sizeof what, "%s: at least %d children at once", round, k_min_forks);
    utest_reportf(count >= k_min_forks, __FILE__, __LINE__, what, "got %d", count);
    snprintf(what, sizeof what, "%s: every child reaped with status 0", round);
    utest_reportf(reaped_ok == count, __FILE__, __LINE__, what, "%d of %d", reaped_ok, count);
    int status;
    snprintf(what, sizeof what, "%s: no child left behind", round);
    errno = 0;
    utest_reportf(wait(&status) == -1 && errno == ECHILD, __FILE__, __LINE__, what, "errno %d",
                  errno);
}

int main(void)
{
    g_page = sysconf(_SC_PAGESIZE);
    struct Grab first = grab_memory();
    check_grab(first, "memory, round 1");
    /* What the first round freed must all be there for the second: a kernel
     * that leaks frames gets less each time. */
    struct Grab second = grab_memory();
    check_grab(second, "memory, round 2");
    utest_reportf(second.megabytes * 10 >= first.megabytes * 9, __FILE__, __LINE__,
                  "round 2 gets at least 90% of the memory round 1 got", "%d MB after %d MB",
                  second.megabytes, first.megabytes);

    int error, reaped_ok;
    int count = grab_processes(&error, &reaped_ok);
    check_processes(count, error, reaped_ok, "processes, round 1");
    int count2 = grab_processes(&error, &reaped_ok);
    check_processes(count2, error, reaped_ok, "processes, round 2");
    utest_reportf(count2 >= count, __FILE__, __LINE__, "round 2 forks as many children as round 1",
                  "%d after %d", count2, count);

    /* And after all that, the machine still runs programs. */
    pid_t pid = fork();
    if (pid == 0) {
        char* argv[] = {"true", NULL};
        execve(utest_bin("true"), argv, NULL);
        _exit(127);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "fork and exec of /bin/true still work");
    return utest_done();
}
