/* lat_pagecache: what the page cache saves, on the disk mounted at /mnt.
 *   lat_pagecache.read_cold   4 KB reads of a 2 MB file none of whose pages
 *                             is cached (most blocks from the disk: the
 *                             buffer cache holds a quarter of it)
 *   lat_pagecache.read_warm   the same reads again: every page cached
 *   lat_pagecache.mmap_fault  the first touch of each page of a MAP_PRIVATE
 *                             mapping of the cached file: a fault that
 *                             enters a cached page
 *   lat_pagecache.exec_ramdisk, .exec_disk_first, .exec_disk
 *                             fork + exec + exit of this program from the
 *                             ramdisk (copied into fresh pages), from the
 *                             disk the first time (its pages read into the
 *                             cache), and from the disk again (mapped from
 *                             the cache)
 * Per op: instructions, and per 1000 ops the counters that changed
 * (pagecache.hits, misses, vm.faults.file, vm.pmap.icache_syncs, ...).
 * Usage: lat_pagecache [-n passes] */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_passes = 4, k_file_bytes = 2 << 20, k_chunk = 4096, k_execs = 10 };

static const char k_child_flag[] = "--exit-at-once";
static char g_buf[k_chunk];

static void read_all(const char* path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        bench_fail("lat_pagecache: cannot open %s", path);
    for (long done = 0; done < k_file_bytes; done += k_chunk)
        if (read(fd, g_buf, k_chunk) != k_chunk)
            bench_fail("lat_pagecache: a read of %s failed", path);
    close(fd);
}

static void copy_file(const char* from, const char* to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0)
        bench_fail("lat_pagecache: cannot copy %s to %s", from, to);
    ssize_t n;
    while ((n = read(in, g_buf, sizeof g_buf)) > 0)
        if (write(out, g_buf, (size_t)n) != n)
            bench_fail("lat_pagecache: a write of %s failed", to);
    if (n < 0 || fsync(out) != 0)
        bench_fail("lat_pagecache: copying %s failed", from);
    close(in);
    close(out);
}

static void fork_exec_wait(const char* path)
{
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork failed");
    if (pid == 0) {
        char* const argv[] = {(char*)"lat_pagecache", (char*)k_child_flag, NULL};
        char* const envp[] = {NULL};
        execve(path, argv, envp);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0)
        bench_fail("the child failed (status 0x%x; 127: exec of %s failed)", status, path);
}

static void execs(const char* name, const char* path, uint64_t count)
{
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < count; ++i)
        fork_exec_wait(path);
    bench_end(&span);
    bench_report(name, &span, count);
}

int main(int argc, char** argv)
{
    if (argc == 2 && strcmp(argv[1], k_child_flag) == 0)
        return 0;
    uint64_t passes;
    bench_iterations(argc, argv, k_default_passes, &passes);
    bench_init("lat_pagecache");
    const char* file = "/mnt/lat_pagecache.data";
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bench_fail("lat_pagecache: cannot create %s (is a disk mounted?)", file);
    for (long done = 0; done < k_file_bytes; done += k_chunk) {
        for (int i = 0; i < k_chunk; ++i)
            g_buf[i] = (char)(done / k_chunk + i);
        if (write(fd, g_buf, k_chunk) != k_chunk)
            bench_fail("lat_pagecache: writing %s failed", file);
    }
    if (fsync(fd) != 0)
        bench_fail("lat_pagecache: fsync failed");
    close(fd);
    const uint64_t reads = k_file_bytes / k_chunk;

    struct BenchSpan span;
    bench_begin(&span);
    read_all(file);
    bench_end(&span);
    bench_report("lat_pagecache.read_cold", &span, reads);
    bench_begin(&span);
    for (uint64_t p = 0; p < passes; ++p)
        read_all(file);
    bench_end(&span);
    bench_report("lat_pagecache.read_warm", &span, reads * passes);

    long page = sysconf(_SC_PAGESIZE);
    uint64_t pages = (uint64_t)(k_file_bytes / page);
    fd = open(file, O_RDONLY);
    volatile char sink = 0;
    uint64_t faults = 0;
    bench_begin(&span);
    for (uint64_t p = 0; p < passes; ++p) {
        char* m = mmap(NULL, k_file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            bench_fail("lat_pagecache: mmap of %s failed", file);
        for (uint64_t i = 0; i < pages; ++i)
            sink += m[i * (uint64_t)page];
        munmap(m, k_file_bytes);
        faults += pages;
    }
    bench_end(&span);
    (void)sink;
    close(fd);
    bench_report("lat_pagecache.mmap_fault", &span, faults);

    copy_file("/bin/lat_pagecache", "/mnt/lat_pagecache");
    fork_exec_wait("/bin/lat_pagecache"); /* the ramdisk's run warm, like the disk's */
    execs("lat_pagecache.exec_ramdisk", "/bin/lat_pagecache", k_execs);
    execs("lat_pagecache.exec_disk_first", "/mnt/lat_pagecache", 1);
    execs("lat_pagecache.exec_disk", "/mnt/lat_pagecache", k_execs);
    return 0;
}
