"""Toll's Python library, shared by the programs in tools/.

A program in tools/ imports it as the package `lib` (`from lib import
emulators`): Python puts a script's own folder, tools/, first on its path, so
no path editing is needed. Tests elsewhere run with PYTHONPATH=tools (ctest
sets it). The modules, lowest first:

    process      one way to run a child process group and read it, with a deadline
    records      the parser of the kernel's serial protocol
    machine      SetupError, find_tool, and Machine: one emulator run
    images       private copies of boot images (the disk image, --add archives)
    qemu, bochs  the Machine of each emulator
    emulators    prepare(): the Machine for an architecture and emulator
    gdbstub      a client of QEMU's gdb stub: breakpoints, registers, memory, monitor
    probes       checks of a lab's mechanism from outside the guest (tools/run --probe)
    lab_*        lab regions, rubrics, builds, grading and reports (tools/grade, tools/mklab)
    worksheet    a lab's worksheet checked against the kernel's METRICs (tools/bench --worksheet)
    linux_anchor the Linux columns: Toll's benchmarks on Debian's i386 Linux (tools/bench)
    busybox      Debian's busybox-static and its testsuite (tools/deps --busybox, the busybox tests)
    addrspace_tables  the address-space chapter's tables and copy-cost sweep
                 (tools/addrspace-tables, tools/bench --book, tools/book)
    walks_tables the page walks per operation and the cost model (tools/walks-tables,
                 tools/bench --book)
    kprofile     the kernel's counting profiler read: instructions by function
                 (tools/bench --profile)

Every function has type hints; `tools/lint python` (the ctest lint.python)
runs mypy (mypy.ini) and flake8 (.flake8) over the library and the programs.
"""
