# The benchmark suite in make check (tools/bench, tests/bench/): the --quick
# subset must give identical numbers twice, and stay within the budgets.
set(TOLL_BENCH ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/bench --build ${CMAKE_BINARY_DIR} -j 1)

# Deterministic mode is deterministic: two runs, every number identical.
add_test(NAME bench.determinism
  COMMAND ${TOLL_BENCH} --quick --repeat 2 --config 4/4 --out ${CMAKE_BINARY_DIR}/bench-determinism)

# The Linux column (tools/bench --linux) is deterministic too: two boots of
# Debian's i386 Linux running the --quick subset give identical numbers, and
# Linux reports page-table isolation off as the configuration asks. Skipped
# (never passed) where tools/deps --linux has not fetched the kernel.
add_test(NAME bench.linux_determinism
  COMMAND ${TOLL_BENCH} --quick --repeat 2 --config linux -j 2 --skip-without-linux
          --out ${CMAKE_BINARY_DIR}/bench-linux)
set_tests_properties(bench.linux_determinism PROPERTIES TIMEOUT 300 LABELS bench
  SKIP_RETURN_CODE 77)

# vm.walks=count counts page walks between CR3 loads: a null system call walks
# nothing under 3/1 (no CR3 load) and something under 4/4 (two loads a call).
add_test(NAME bench.walks
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/walks-tables check --build ${CMAKE_BINARY_DIR})
set_tests_properties(bench.walks PROPERTIES TIMEOUT 120 LABELS bench)

# Key path lengths within tests/bench/budgets.toml.
add_test(NAME bench.budgets
  COMMAND ${TOLL_BENCH} --quick --config 3/1 --config 3/1-pti --config 4/4 --config arm64-4k
          --budgets ${CMAKE_SOURCE_DIR}/tests/bench/budgets.toml
          --out ${CMAKE_BINARY_DIR}/bench-budgets)

# The budget check can fail: a recorded result above a bound must be refused,
# with a message naming the metric, its value and the bound.
add_test(NAME bench.budgets_refuse_excess
  COMMAND ${TOLL_BENCH} --results ${CMAKE_SOURCE_DIR}/tests/bench/over_budget.csv
          --budgets ${CMAKE_SOURCE_DIR}/tests/bench/budgets.toml)
set_tests_properties(bench.budgets_refuse_excess PROPERTIES
  PASS_REGULAR_EXPRESSION "lat_syscall.getppid = 301 instr in configuration 3/1, above its budget of 160")

set_tests_properties(bench.determinism bench.budgets PROPERTIES TIMEOUT 120 LABELS bench)

# A budget relative to another configuration (`over`) can fail too: 4/4's
# null system call 41 instructions above 3/1's breaks the isolation's 30,
# while 3/1-pti's 30 above it holds.
add_test(NAME bench.budgets_refuse_isolation_excess
  COMMAND ${TOLL_BENCH} --results ${CMAKE_SOURCE_DIR}/tests/bench/isolation_over_budget.csv
          --budgets ${CMAKE_SOURCE_DIR}/tests/bench/budgets.toml)
set_tests_properties(bench.budgets_refuse_isolation_excess PROPERTIES TIMEOUT 30 LABELS bench
  PASS_REGULAR_EXPRESSION "lat_syscall.getppid = 221 instr in configuration 4/4, 41 more than in 3/1, above its budget of 30 more"
  FAIL_REGULAR_EXPRESSION "configuration 3/1-pti, 30 more")
# Every row of budgets.toml can fail: each, one over its bound while all the
# others sit on theirs, is refused by name (and all on their bounds pass).
add_test(NAME bench.every_budget_fails
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/bench/every_budget_fails.py)
set_tests_properties(bench.every_budget_fails PROPERTIES TIMEOUT 120 LABELS bench
  ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
# The kernel's counting profiler names the functions of a path: the null
# system call's table must hold its handler and the dispatcher, and the
# instructions it attributes to the kernel must be most of the measured path.
add_test(NAME bench.profile_names_functions
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/bench/profile_names_functions.py
          ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-profile)
set_tests_properties(bench.profile_names_functions PROPERTIES TIMEOUT 120 LABELS bench)
# bench.budgets' results.csv is also the fresh run book.numbers.fresh compares the book with.
set_tests_properties(bench.budgets PROPERTIES FIXTURES_SETUP bench_results)

# fpu_ctx times the steady state only: the per-hop cost does not depend on
# the number of rounds, and no teardown falls inside the timed span.
add_test(NAME bench.fpu_ctx.steady_state
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/bench/steady_state.py --build ${CMAKE_BINARY_DIR})
set_tests_properties(bench.fpu_ctx.steady_state PROPERTIES TIMEOUT 60 LABELS bench)
set_tests_properties(bench.budgets_refuse_excess PROPERTIES TIMEOUT 30 LABELS bench)

# The comparison behind bench.determinism can fail: one number that differs
# between two result files must be found and named.
add_test(NAME bench.compare_finds_drift
  COMMAND ${TOLL_BENCH} --results ${CMAKE_SOURCE_DIR}/tests/bench/over_budget.csv
          --compare ${CMAKE_SOURCE_DIR}/tests/bench/drifted.csv)
set_tests_properties(bench.compare_finds_drift PROPERTIES TIMEOUT 30 LABELS bench
  PASS_REGULAR_EXPRESSION "lat_pipe.roundtrip: earlier \\(2001, 'instr'\\), now \\(2000, 'instr'\\)")

# Lab 0 (labs/lab0-measure): the worksheet's numbers match a fresh
# deterministic run, and the written answers are there. The rubric's
# worksheet.numbers item is this test.
add_test(NAME lab0.worksheet
  COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-lab0
          --worksheet ${CMAKE_SOURCE_DIR}/labs/lab0-measure/checks.toml
                      ${CMAKE_SOURCE_DIR}/labs/lab0-measure/results.toml)
set_tests_properties(lab0.worksheet PROPERTIES TIMEOUT 120 LABELS "bench;lab")

# Lab 4x4 (labs/lab-4x4): the worksheet's numbers and ratios match fresh
# deterministic runs under each vm.split= layout. The rubric's
# worksheet.numbers item is this test.
add_test(NAME lab4x4.worksheet
  COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-lab4x4
          --worksheet ${CMAKE_SOURCE_DIR}/labs/lab-4x4/checks.toml
                      ${CMAKE_SOURCE_DIR}/labs/lab-4x4/results.toml)
set_tests_properties(lab4x4.worksheet PROPERTIES TIMEOUT 180 LABELS "bench;lab")
# The reference answers quote numbers; each must be one the kernel measures
# today (or a difference of two, or a fixed number of checks.toml), so they
# cannot go stale unseen. Not part of the rubric: students may quote freely.
add_test(NAME lab4x4.reference_answers
  COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-lab4x4-reference --reference
          --worksheet ${CMAKE_SOURCE_DIR}/labs/lab-4x4/checks.toml
                      ${CMAKE_SOURCE_DIR}/labs/lab-4x4/results.toml)
add_test(NAME lab4x4.reference_answers.finds_stale
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/bench/stale_answer.py
          ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-lab4x4-stale --
          ${CMAKE_SOURCE_DIR}/labs/lab-4x4/checks.toml ${CMAKE_SOURCE_DIR}/labs/lab-4x4/results.toml)
set_tests_properties(lab4x4.reference_answers lab4x4.reference_answers.finds_stale PROPERTIES
  TIMEOUT 180 LABELS "bench;lab")

# The network lab (labs/lab-net): the worksheet's numbers and the ratio match
# fresh deterministic runs of netblast under 3/1 and 4/4. The rubric's
# worksheet.numbers item is this test.
add_test(NAME labnet.worksheet
  COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-labnet
          --worksheet ${CMAKE_SOURCE_DIR}/labs/lab-net/checks.toml
                      ${CMAKE_SOURCE_DIR}/labs/lab-net/results.toml)
# The reference answers quote only numbers the kernel measures today.
add_test(NAME labnet.reference_answers
  COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-labnet-reference --reference
          --worksheet ${CMAKE_SOURCE_DIR}/labs/lab-net/checks.toml
                      ${CMAKE_SOURCE_DIR}/labs/lab-net/results.toml)
set_tests_properties(labnet.worksheet labnet.reference_answers PROPERTIES TIMEOUT 180
  LABELS "bench;lab")

# The superpages lab (labs/lab-superpages): the worksheet's numbers and ratios
# match fresh deterministic runs of the arm64 kernels, superpages off and on
# at both granules. The rubric's worksheet.numbers item is this test (the
# grader builds only arm64 for that lab).
if("arm64" IN_LIST TOLL_ARCHES AND "4K" IN_LIST TOLL_ARM64_GRANULES
   AND "16K" IN_LIST TOLL_ARM64_GRANULES)
  add_test(NAME labsuperpages.worksheet
    COMMAND ${TOLL_BENCH} --out ${CMAKE_BINARY_DIR}/bench-labsuperpages
            --worksheet ${CMAKE_SOURCE_DIR}/labs/lab-superpages/checks.toml
                        ${CMAKE_SOURCE_DIR}/labs/lab-superpages/results.toml)
  set_tests_properties(labsuperpages.worksheet PROPERTIES TIMEOUT 180 LABELS "bench;lab")
endif()

# --compare may name the very file the run writes (the lab 0 handout does:
# make bench ARGS='--compare build/bench/results.csv'): it is read before it
# is overwritten, so a number that moved is still found.
add_test(NAME bench.compare_reads_before_overwriting
  COMMAND sh -c "mkdir -p '${CMAKE_BINARY_DIR}/bench-compare' && cp '${CMAKE_SOURCE_DIR}/tests/bench/earlier_getppid.csv' '${CMAKE_BINARY_DIR}/bench-compare/results.csv' && '${TOLL_PYTHON}' '${CMAKE_SOURCE_DIR}/tools/bench' --build '${CMAKE_BINARY_DIR}' --only lat_syscall --config 3/1 --out '${CMAKE_BINARY_DIR}/bench-compare' --compare '${CMAKE_BINARY_DIR}/bench-compare/results.csv'")
set_tests_properties(bench.compare_reads_before_overwriting PROPERTIES TIMEOUT 60 LABELS bench
  PASS_REGULAR_EXPRESSION "lat_syscall.getppid: earlier \\(1, 'instr'\\)")
