/* lat_fsync: the cost of making a write durable on the disk mounted at /mnt.
 * Two loops, each op a write(2) then fsync(2) of the same file:
 *   lat_fsync.overwrite  512 bytes over the file's first block (no allocation)
 *   lat_fsync.append     1 KB at the end (a new block: bitmap, counts, inode)
 * METRIC records give instructions per op and, per 1000 ops, the disk's and
 * the journal's counters (blk.write_calls, jbd2.blocks_logged, ...); run it on
 * an ext2 and an ext3 disk to see what the journal costs.
 * Usage: lat_fsync [-n ops] */
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_ops = 100 };

int main(int argc, char** argv)
{
    uint64_t ops;
    bench_iterations(argc, argv, k_default_ops, &ops);
    bench_init("lat_fsync");
    int fd = open("/mnt/lat_fsync", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bench_fail("lat_fsync: cannot create /mnt/lat_fsync (is a disk mounted?)");
    static char block[1024];
    for (unsigned i = 0; i < sizeof block; ++i)
        block[i] = (char)i;
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block || fsync(fd) != 0)
        bench_fail("lat_fsync: the first write failed");
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < ops; ++i)
        if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, block, 512) != 512 || fsync(fd) != 0)
            bench_fail("lat_fsync: an overwrite failed");
    bench_end(&span);
    bench_report("lat_fsync.overwrite", &span, ops);
    bench_begin(&span);
    for (uint64_t i = 0; i < ops; ++i)
        if (lseek(fd, 0, SEEK_END) < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block ||
            fsync(fd) != 0)
            bench_fail("lat_fsync: an append failed");
    bench_end(&span);
    bench_report("lat_fsync.append", &span, ops);
    close(fd);
    return 0;
}
