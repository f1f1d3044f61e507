# Toll's front door: a thin layer over CMake and tools/. Every target that
# needs Debian packages runs tools/deps first, which installs what is missing
# (as root) or prints the exact apt-get command.
BUILD ?= build
JOBS ?= $(shell nproc)
ARGS ?=
CMDLINE ?=
# CPUs for the interactive boots (qemu, qemu-arm64, bochs, qemu-gdb*): 1 to 8.
CPUS ?= 1
# Extra CMake options for the first configure, e.g. -DTOLL_WERROR=ON (.ci/run).
CMAKE_ARGS ?=
PYTHON := /usr/bin/python3

.PHONY: all help deps configure build qemu qemu-arm64 bochs qemu-gdb qemu-gdb-arm64 check check-fast book book-instructor bench fuzz crash conformance stress clean format

all: build

# What each target does; tests/lint checks that every .PHONY target is here.
help:
	@echo 'make [target] [BUILD=dir] [CMDLINE="kernel words"] [CPUS=n] [ARGS="tool options"]'
	@echo '  all, build      build the kernels, user programs and host tests (the default)'
	@echo '  qemu            boot i386 under QEMU on this terminal (Ctrl-A X quits); CMDLINE= picks what runs, CPUS=N the CPUs'
	@echo '  qemu-arm64      boot arm64 under qemu-system-aarch64 -M virt (BUSYBOX=1 on either: busybox sh as the shell)'
	@echo '  bochs           boot the loaderless i386 disk image under Bochs'
	@echo '  qemu-gdb        boot i386 stopped for gdb-multiarch -x tools/gdbinit (qemu-gdb-arm64: arm64)'
	@echo '  qemu-gdb-arm64  the same for arm64, with tools/gdbinit-arm64'
	@echo '  check           the whole test suite (ctest); ARGS="-R regex" runs a part'
	@echo '  check-fast      host tests and a boot of each kernel, under 90 seconds'
	@echo '  book            build the book into $(BUILD)/book/html/index.html'
	@echo '  book-instructor  the instructor edition (solutions, answers, grading notes) into $(BUILD)/book-instructor/html'
	@echo '  bench           the benchmarks in deterministic mode (ARGS="--book", "--linux", "--quick")'
	@echo '  fuzz            the long fuzz run (minutes); ARGS="--calls N --seed S"'
	@echo '  crash           the long crash sweep of ext3 on both architectures (minutes); ARGS="--cuts N --kills K"'
	@echo '  conformance     busybox'"'"'s own testsuite (more of it than make check) on both architectures'
	@echo '  stress          the long concurrent stress run at 2 and 4 CPUs (minutes); ARGS="--iters N"'
	@echo '  deps            check and install the Debian packages (tools/deps --list)'
	@echo '  configure       run CMake into $(BUILD) only'
	@echo '  format          clang-format every C++ file git tracks'
	@echo '  clean           remove $(BUILD)'

deps:
	@$(PYTHON) tools/deps

# Ninja and ccache when they are installed (tools/deps installs both): a
# rebuild after a small edit then compiles only what changed, in any checkout.
GENERATOR := $(if $(shell command -v ninja),-G Ninja,)
LAUNCHER := $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache,)
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

# A configure that fails leaves a CMakeCache.txt behind; it is removed, so
# that the next make configures again instead of failing in the build with
# no build.ninja.
$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) || \
	  { rm -f $(BUILD)/CMakeCache.txt; \
	    echo "make: configuring $(BUILD) failed (a missing package? make deps installs them)" >&2; exit 1; }

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)
	@ln -sf $(BUILD)/i386/compile_commands.json compile_commands.json

# Boot the i386 kernel under QEMU with the serial console on this terminal.
# BUSYBOX=1: Debian's busybox sh as the shell (tools/deps --busybox fetches it).
BUSYBOX_DIR ?= $(HOME)/.cache/toll/busybox
busybox_args = $(if $(filter 1,$(BUSYBOX)),--add $(BUSYBOX_DIR)/$(1)/busybox,)
busybox_cmdline = $(if $(CMDLINE),$(CMDLINE),$(if $(filter 1,$(BUSYBOX)),run=/bin/busybox sh,))

qemu: deps build
	$(PYTHON) tools/run --build $(BUILD) --arch i386 --emu qemu --interactive --cpus $(CPUS) $(call busybox_args,i386) --cmdline "$(busybox_cmdline)" $(ARGS)

qemu-arm64: deps build
	$(PYTHON) tools/run --build $(BUILD) --arch arm64 --interactive --cpus $(CPUS) $(call busybox_args,arm64) --cmdline "$(busybox_cmdline)" $(ARGS)

# Boot the loaderless disk image under Bochs.
bochs: deps build
	$(PYTHON) tools/run --build $(BUILD) --arch i386 --emu bochs --boot disk --interactive --cpus $(CPUS) --cmdline "$(CMDLINE)" $(ARGS)

# QEMU waits for gdb-multiarch: in another terminal, `gdb-multiarch -x tools/gdbinit`.
qemu-gdb: deps build
	$(PYTHON) tools/run --build $(BUILD) --arch i386 --gdb --cpus $(CPUS) --cmdline "$(CMDLINE)" $(ARGS)

# The same for arm64: `gdb-multiarch -x tools/gdbinit-arm64`.
qemu-gdb-arm64: deps build
	$(PYTHON) tools/run --build $(BUILD) --arch arm64 --gdb --cpus $(CPUS) --cmdline "$(CMDLINE)" $(ARGS)

# Everything: host tests, system tests under every emulator, the book.
check: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(ARGS)

# The edit-test loop: host tests and one boot of each kernel (ctest label
# `fast`), under 90 seconds. make check remains the test of record.
check-fast: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L fast $(ARGS)

# The long fuzz (minutes): 10^6 seeded system calls under each i386 layout
# and on arm64, and fault injection over every user test. ARGS="--calls N --seed S".
fuzz: deps build
	$(PYTHON) tests/system/fuzz_long.py --build $(BUILD) $(ARGS)

# Debian's busybox-static and its source package's testsuite (tools/deps
# --busybox fetches both): a larger list than make check's, on both ports.
CONFORMANCE = cut.tests expand.tests fold.tests head.tests nl.tests rev.tests seq.tests \
	sort.tests tr.tests uniq.tests printf.tests tail.tests comm.tests sed.tests xargs.tests \
	od.tests hexdump.tests md5sum.tests sha1sum.tests sha256sum.tests sum.tests
conformance: deps build
	$(PYTHON) tools/deps --busybox
	PYTHONPATH=tools $(PYTHON) tests/system/busybox_check.py --arch i386 --build $(BUILD) --timeout 600 --suite $(CONFORMANCE)
	PYTHONPATH=tools $(PYTHON) tests/system/busybox_check.py --arch arm64 --build $(BUILD) --timeout 600 --suite $(CONFORMANCE)
# The long stress (minutes): ut_stress, one worker per CPU, at 2 and 4 CPUs
# on both architectures, every run free of panics and leaks. ARGS="--iters N".
stress: deps build
	$(PYTHON) tests/system/stress_long.py --build $(BUILD) $(ARGS)

book: deps configure
	$(PYTHON) tools/book --build $(BUILD)

# The instructor edition: the book with every lab's solution and the answer
# and grading notes of book/instructor/. Never give it to students.
book-instructor: deps configure
	$(PYTHON) tools/book --build $(BUILD) --instructor

bench: deps build
	$(PYTHON) tools/bench --build $(BUILD) $(ARGS)
	$(PYTHON) tools/bench-superpages --build $(BUILD)

# The long crash sweep: power cuts at many points of a journaled workload,
# then e2fsck must replay and find everything whole (tests/system/crash_sweep.py).
CRASH_ARGS ?= --cuts 40 --kills 20
crash: deps build
	$(PYTHON) tests/system/crash_sweep.py --work $(BUILD)/crash-i386 $(CRASH_ARGS) $(ARGS) -- --build $(BUILD) --arch i386
	$(PYTHON) tests/system/crash_sweep.py --work $(BUILD)/crash-arm64 $(CRASH_ARGS) $(ARGS) -- --build $(BUILD) --arch arm64

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
