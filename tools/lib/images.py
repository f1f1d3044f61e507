"""Private copies of boot images for one run: the loaderless disk image with
its command-line sector, the Bochs configuration, and --add.

(Filled in by the loaderless-boot work; until then these say so clearly.)
"""

from emulators import SetupError


def private_disk(args, scratch):
    raise SetupError("the loaderless disk image is not built yet")


def bochs(args, machine):
    raise SetupError("Bochs support is not written yet")


def kernel_with_extra_programs(args, scratch, kernel):
    raise SetupError("--add needs the initial ramdisk, which is not built yet")
