# Grading: lab regions and rubrics (fast), and the hostile batch, which grades
# the reference, the starter and every hostile submission once with tools/grade.
add_test(NAME grading.regions
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_regions.py)
add_test(NAME grading.labs_consistent COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/grade --check)
add_test(NAME grading.build_tools
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_build.py)
# What the grader writes and tells, without a build.
add_test(NAME grading.reports
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_reports.py)
# The sandbox in each mode the machine offers (bubblewrap, and the dedicated
# user it falls back to), against small hostile commands.
add_test(NAME grading.sandbox
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_sandbox.py)
# The grader's looks from outside the machine (tools/run --probe, QEMU's gdb
# stub) on this build's kernel: each passes where the mechanism is, and fails
# where it is not.
add_test(NAME grading.probes
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_probes.py ${CMAKE_BINARY_DIR})
set_tests_properties(grading.probes PROPERTIES TIMEOUT 120
  ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
# The grader's compiler cache outlives the scratch folders, which each run
# empties, and this build: like the build's own ccache it serves every
# checkout of this user, so that a clean clone finds the reference's objects
# (the grader keys what it keeps by the checkout's contents; ccache keys
# objects by theirs). /var/tmp, not a home folder: the sandbox's users must
# enter it (tools/grade refuses a folder they cannot, or others could write).
execute_process(COMMAND id -u OUTPUT_VARIABLE TOLL_UID OUTPUT_STRIP_TRAILING_WHITESPACE)
set(TOLL_GRADING_CACHE /var/tmp/toll-grading-cache-${TOLL_UID} CACHE PATH
    "the grading tests' compiler cache (tools/grade --cache)")
add_test(NAME grading.hostile_batch
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/check_batch.py
          --work ${CMAKE_BINARY_DIR}/grading-check --cache ${TOLL_GRADING_CACHE} -j 2)
# The batch grades two submissions at once, but much of each grading waits
# (timeouts, boots): one core, so that other tests run beside it rather than
# the machine waiting with it. (It finds its own leftovers by its own scratch
# folder, never another check's.) COST: the longest tests start first, so the
# short ones fill in beside them. The time limit leaves room for the first run
# on a machine, which waits for the reference's build (cold, minutes under load).
set_tests_properties(grading.hostile_batch PROPERTIES TIMEOUT 900 PROCESSORS 1 COST 10000)
set_tests_properties(grading.regions grading.labs_consistent grading.build_tools
  grading.reports PROPERTIES TIMEOUT 60)
# The sandbox test runs many short sandboxed commands: under a heavy load
# (another build beside it) it has taken 56 s.
set_tests_properties(grading.sandbox PROPERTIES TIMEOUT 150)
# The Gradescope package, unpacked into a simulated autograder root, grades a
# flat upload of the reference there (with the batch's warm compiler cache).
add_test(NAME grading.gradescope
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_gradescope.py
          --work ${CMAKE_BINARY_DIR}/grading-gradescope --cache ${TOLL_GRADING_CACHE})
set_tests_properties(grading.gradescope PROPERTIES TIMEOUT 300 PROCESSORS 1 COST 4000)
# The tests import the tools' library as the package `lib` (tools/lib).
set_tests_properties(grading.regions grading.build_tools grading.hostile_batch
  grading.reports grading.sandbox grading.gradescope
  PROPERTIES ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)

# Every lab is a thinking lab: learning goals, background linked into the
# chapters, commands the build runs, written questions that ask why and carry
# points, a worksheet whose numbers the grader checks and whose keys the
# starter has ready; and the check finds each defect planted in a copy.
add_test(NAME grading.handouts COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/check_handouts.py)
add_test(NAME grading.handouts.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/check_handouts.py --self-test)
set_tests_properties(grading.handouts grading.handouts.finds_planted
  PROPERTIES TIMEOUT 60 LABELS fast ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)

# Every other lab: its reference scores full marks and its starter builds and
# fails exactly the items that cover its regions.
file(GLOB TOLL_LAB_RUBRICS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/labs/*/rubric.toml)
foreach(rubric ${TOLL_LAB_RUBRICS})
  file(STRINGS ${rubric} lab_line REGEX "^lab *= *\"[^\"]+\"" LIMIT_COUNT 1)
  string(REGEX REPLACE "^lab *= *\"([^\"]+)\".*" "\\1" lab "${lab_line}")
  if(lab AND NOT lab STREQUAL "demo")
    add_test(NAME grading.meaningful.${lab}
      COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/check_batch.py --lab ${lab}
              --plain --work ${CMAKE_BINARY_DIR}/grading-check-${lab}
              --cache ${TOLL_GRADING_CACHE} -j 2)
    # Much of a lab check is waiting on a starter's timeouts: one core each,
    # so another test can run beside it.
    set_tests_properties(grading.meaningful.${lab} PROPERTIES TIMEOUT 600 PROCESSORS 1 COST 5000
      ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
  endif()
endforeach()

# The sandbox test counts the processes left under the sandbox's user after
# a step, and every grading run uses that user: it must not run beside one.
# Each grading run holds a lock of its own (so they still run side by side);
# the sandbox test holds them all.
set(toll_sandbox_users grading.hostile_batch grading.gradescope)
foreach(lab 4x4 files fpu locks measure net superpages vm86)
  if(TEST grading.meaningful.${lab})
    list(APPEND toll_sandbox_users grading.meaningful.${lab})
  endif()
endforeach()
set(toll_sandbox_locks)
foreach(t ${toll_sandbox_users})
  set_property(TEST ${t} APPEND PROPERTY RESOURCE_LOCK sandbox-user.${t})
  list(APPEND toll_sandbox_locks sandbox-user.${t})
endforeach()
set_property(TEST grading.sandbox APPEND PROPERTY RESOURCE_LOCK ${toll_sandbox_locks})
