/* A program that is not in the kernel's ramdisk: tests/system/arm64.cmake
 * and disk.cmake build it with tools/cc and boot with tools/run --add, so it
 * runs only if --add really delivered it to /bin. */
#include <stdio.h>

int main(void)
{
    printf("added program ran\n");
    return 0;
}
