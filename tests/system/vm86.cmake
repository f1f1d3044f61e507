# System tests of the vm86 BIOS memory probe (src/arch/i386/vm86/): loaderless
# boots at several memory sizes under QEMU (SeaBIOS) and Bochs (its own BIOS),
# each checked against the memory the emulator was given and, under QEMU,
# against the multiboot loader's map of the same machine (vm86_probe.py).
# The ktests themselves (test=vm86.*) run in the disk and multiboot ktest runs.
if(NOT "i386" IN_LIST TOLL_ARCHES)
  return()
endif()

set(TOLL_VM86_PROBE ${CMAKE_CURRENT_SOURCE_DIR}/vm86_probe.py)
function(toll_vm86_probe_test name)
  add_test(NAME system.i386.vm86.${name}
           COMMAND ${TOLL_PYTHON} ${TOLL_VM86_PROBE} --build ${CMAKE_BINARY_DIR} ${ARGN})
  set_tests_properties(system.i386.vm86.${name} PROPERTIES TIMEOUT 120)
endfunction()

# QEMU accepts far more than a 32-bit machine addresses; at 8 GB, E820
# reports memory above 4 GB, which only E820 can describe.
foreach(mb 15 64 256 1024 8192)
  toll_vm86_probe_test(qemu.probe_${mb}mb --emu qemu --mem ${mb} --multiboot)
endforeach()
# Bochs allows at most 2048 MB.
foreach(mb 15 64 256 1024 2048)
  toll_vm86_probe_test(bochs.probe_${mb}mb --emu bochs --mem ${mb})
endforeach()

# The fallbacks, forced: E801 without E820, AH=88h without either.
foreach(emu qemu bochs)
  toll_vm86_probe_test(${emu}.e801 --emu ${emu} --mem 256 --cmdline vm86.e820=off --method e801)
  toll_vm86_probe_test(${emu}.e88 --emu ${emu} --mem 32
                       --cmdline "vm86.e820=off vm86.e801=off" --method e88)
endforeach()


# The monitor under every address-space layout: it borrows PDE 0 of whatever
# page directory is current, and brings its own GDT, TSS and IDT.
foreach(split 3/1-pti 4/4)
  string(REPLACE "/" "" tag ${split})
  toll_system_test(i386.vm86.qemu.ktests_split_${tag} --arch i386 --emu qemu --boot disk
                   --cmdline "test=vm86.* vm.split=${split}")
endforeach()
