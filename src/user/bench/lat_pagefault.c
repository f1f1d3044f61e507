/* lat_pagefault: the demand-zero page fault. Maps fresh anonymous memory and
 * writes one byte to each page: every write traps, and the kernel finds a
 * zeroed page, maps it and returns. Reports instructions per page.
 * Usage: lat_pagefault [-n pages] */
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_pages = 256 };

int main(int argc, char** argv)
{
    uint64_t pages;
    bench_iterations(argc, argv, k_default_pages, &pages);
    bench_init("lat_pagefault");
    /* The kernel says how big a page is (AT_PAGESZ): 4 KB, or 16 KB on arm64's 16 KB granule. */
    size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
    size_t length = (size_t)pages * page_size;
    volatile char* region =
        mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED)
        bench_fail("mmap of %llu pages failed", (unsigned long long)pages);
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < pages; ++i)
        region[i * page_size] = 1;
    bench_end(&span);
    for (uint64_t i = 0; i < pages; ++i)
        if (region[i * page_size] != 1 || region[i * page_size + 1] != 0)
            bench_fail("page %llu does not hold what was written", (unsigned long long)i);
    munmap((void*)region, length);
    bench_report("lat_pagefault.zero_fill", &span, pages);
    return 0;
}
