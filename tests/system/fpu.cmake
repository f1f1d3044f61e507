# The FPU (src/arch/i386/fpu/): register isolation in both switch modes and
# on AMD and Intel CPU models, the pointer leak and every cleaning strategy
# under Bochs (which records FOP/FIP/FDP; fpu.leak=simulate restores as an
# AMD K7/K8 does), the QEMU run that must report itself skipped, and the
# kernel-mode #NM panic.

# Isolation: QEMU's CPU models, lazy and eager.
foreach(mode lazy eager)
  foreach(cpu qemu32 athlon phenom core2duo)
    toll_system_test(i386.qemu.fpu.isolation.${mode}.${cpu} --arch i386 --cpu ${cpu}
                     --cmdline "fpu.switch=${mode} run=/bin/fpu_iso" --timeout 60)
  endforeach()
  toll_system_test(i386.bochs.fpu.isolation.${mode} --arch i386 --emu bochs --boot disk
                   --cpu athlon64_clawhammer --cmdline "fpu.switch=${mode} run=/bin/fpu_iso")
endforeach()

# The leak, shown: an AMD model (the bug flag set) with cleaning off.
set(TOLL_FPU_AMD --arch i386 --emu bochs --boot disk --cpu athlon64_clawhammer)
set(TOLL_FPU_INTEL --arch i386 --emu bochs --boot disk --cpu core2_penryn_t9600)
toll_system_test(i386.bochs.fpu.leak.off ${TOLL_FPU_AMD}
                 --cmdline "fpu.leak=simulate fpu.clean=off run=/bin/fpu_leak expect=leak")
# Every strategy defeats it on the AMD model, lazily; two of them eagerly too.
foreach(strategy always flag patched nops idt)
  toll_system_test(i386.bochs.fpu.leak.${strategy}.lazy ${TOLL_FPU_AMD}
    --cmdline "fpu.switch=lazy fpu.leak=simulate fpu.clean=${strategy} run=/bin/fpu_leak expect=clean")
endforeach()
foreach(strategy always idt)
  toll_system_test(i386.bochs.fpu.leak.${strategy}.eager ${TOLL_FPU_AMD}
    --cmdline "fpu.switch=eager fpu.leak=simulate fpu.clean=${strategy} run=/bin/fpu_leak expect=clean")
endforeach()
# On the Intel model the flag is clear: always still cleans, flag and patched
# skip the sequence (so the simulated AMD restore leaks), fpu.bug=1 forces it.
toll_system_test(i386.bochs.fpu.leak.intel.always ${TOLL_FPU_INTEL}
  --cmdline "fpu.leak=simulate fpu.clean=always run=/bin/fpu_leak expect=clean")
toll_system_test(i386.bochs.fpu.leak.intel.flag ${TOLL_FPU_INTEL}
  --cmdline "fpu.leak=simulate fpu.clean=flag run=/bin/fpu_leak expect=leak")
toll_system_test(i386.bochs.fpu.leak.intel.patched_bug_override ${TOLL_FPU_INTEL}
  --cmdline "fpu.bug=1 fpu.leak=simulate fpu.clean=patched run=/bin/fpu_leak expect=clean")

# QEMU stores zero pointers, so the leak cannot show: the leak test must say
# SKIP. This test passes only on that SKIP; a PASS or a FAIL of the leak test
# (it claims to see what QEMU cannot show) fails it, as does no record at all.
add_test(NAME system.i386.qemu.fpu.leak.skipped_under_qemu
  COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --quiet --json - --arch i386
          --cpu athlon --cmdline "fpu.leak=simulate fpu.clean=off run=/bin/fpu_leak expect=leak")
set_tests_properties(system.i386.qemu.fpu.leak.skipped_under_qemu PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "\"run:/bin/fpu_leak\": {[^}]*\"status\": \"SKIP\"")

# An FPU instruction in the kernel (CR0.TS set) must panic, clearly.
toll_system_test(i386.qemu.fpu.kernel_nm_panics --arch i386 --cmdline "fpu.selftest=kernel_nm"
                 --expect-panic "device not available (#NM) in kernel mode")

# fpu.bench.restore_paths, counting instructions: restore_always is
# restore_plain with the cleaning sequence in front, so it costs more, by
# that sequence (with a real clock the two are too close to compare).
add_test(NAME system.i386.qemu.fpu.always_costs_more_than_plain
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py --metric fpu.clean_sequence
                 --min 1
                 -- --build ${CMAKE_BINARY_DIR} --arch i386 --deterministic
                    --cmdline "test=fpu.bench.restore_paths")
set_tests_properties(system.i386.qemu.fpu.always_costs_more_than_plain PROPERTIES TIMEOUT 60)
