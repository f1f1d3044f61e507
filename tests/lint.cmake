# Checks of the source tree itself (tools/lint): each fails make check when
# the tree drifts from a rule CONTRIBUTING.md states. Each check also runs on
# a fixture that breaks its rule, which proves that the check can fail.
set(TOLL_LINT ${CMAKE_SOURCE_DIR}/tools/lint)

add_test(NAME lint.format COMMAND ${TOLL_PYTHON} ${TOLL_LINT} format)
add_test(NAME lint.format.detects_unformatted
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} format ${CMAKE_SOURCE_DIR}/tests/lint/unformatted.txt)
set_tests_properties(lint.format.detects_unformatted PROPERTIES
  PASS_REGULAR_EXPRESSION "unformatted.txt: line 3 differs from clang-format's layout")
set_tests_properties(lint.format lint.format.detects_unformatted PROPERTIES LABELS fast TIMEOUT 60)

# The layering of src/kernel/layering.toml (src/kernel/README.md explains it).
add_test(NAME lint.layering COMMAND ${TOLL_PYTHON} ${TOLL_LINT} layering)
add_test(NAME lint.layering.detects_violations
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} layering --root ${CMAKE_SOURCE_DIR}/tests/lint/layering
          --rules ${CMAKE_SOURCE_DIR}/src/kernel/layering.toml)
set_tests_properties(lint.layering.detects_violations PROPERTIES
  PASS_REGULAR_EXPRESSION
  "other_port.cpp:3: includes arch/arm64/cpu.h.*reaches_up.cpp:3: includes kernel/proc/process.h.*: 2 include"
  FAIL_REGULAR_EXPRESSION "allowed.cpp")
set_tests_properties(lint.layering lint.layering.detects_violations PROPERTIES LABELS fast TIMEOUT 60)

# clang-tidy with the checks of .clang-tidy over the core and both ports,
# each file compiled as its kernel build compiles it.
add_test(NAME lint.tidy COMMAND ${TOLL_PYTHON} ${TOLL_LINT} tidy --build ${CMAKE_BINARY_DIR})
add_test(NAME lint.tidy.detects_bugs
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} tidy ${CMAKE_SOURCE_DIR}/tests/lint/tidy_bug.cpp)
set_tests_properties(lint.tidy.detects_bugs PROPERTIES
  PASS_REGULAR_EXPRESSION "tidy_bug.cpp:7:5: error: .*bugprone-suspicious-memset-usage")
set_tests_properties(lint.tidy lint.tidy.detects_bugs PROPERTIES TIMEOUT 120)

# make help describes every target of the Makefile; the fixture's target
# `secret` is not described, so the check must name it.
add_test(NAME lint.makehelp COMMAND ${TOLL_PYTHON} ${TOLL_LINT} makehelp)
add_test(NAME lint.makehelp.detects_undocumented
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} makehelp --makefile ${CMAKE_SOURCE_DIR}/tests/lint/Makefile.undocumented)
set_tests_properties(lint.makehelp.detects_undocumented PROPERTIES
  PASS_REGULAR_EXPRESSION "make help does not describe: secret")
set_tests_properties(lint.makehelp lint.makehelp.detects_undocumented PROPERTIES LABELS fast TIMEOUT 30)

# No Python file edits sys.path: the tools' library is the package `lib`,
# found beside a program in tools/ or through PYTHONPATH=tools. The fixture
# edits sys.path six ways (and reads it twice, which is allowed).
add_test(NAME lint.syspath COMMAND ${TOLL_PYTHON} ${TOLL_LINT} syspath)
add_test(NAME lint.syspath.detects_edits
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} syspath ${CMAKE_SOURCE_DIR}/tests/lint/syspath_edit.txt)
set_tests_properties(lint.syspath.detects_edits PROPERTIES
  PASS_REGULAR_EXPRESSION
  "txt:4: sys.path.insert.*txt:5: sys.path.append.*txt:6: an assignment.*txt:7: an assignment.*txt:8: site.addsitedir.*txt:9: from sys import path.*FAILED: 6 problem"
  FAIL_REGULAR_EXPRESSION "txt:(1[01]|[1-3]):")
set_tests_properties(lint.syspath lint.syspath.detects_edits PROPERTIES LABELS fast TIMEOUT 30)

# mypy (mypy.ini: every function typed) and flake8 (.flake8: 100 columns)
# over tools/lib and the Python programs of tools/. One fixture has a None
# default typed as str and an untyped function (mypy's two errors, flake8
# clean); the other an unused import, an ambiguous name, two spaces and a
# 101-column line beside a 100-column one (flake8's four, mypy clean).
add_test(NAME lint.python COMMAND ${TOLL_PYTHON} ${TOLL_LINT} python --build ${CMAKE_BINARY_DIR})
add_test(NAME lint.python.detects_type_error
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} python --build ${CMAKE_BINARY_DIR}
          ${CMAKE_SOURCE_DIR}/tests/lint/python_type_error.txt)
set_tests_properties(lint.python.detects_type_error PROPERTIES
  PASS_REGULAR_EXPRESSION
  "txt:4: error: Incompatible default for argument \"kernel\".*txt:8: error: Function is missing a type annotation.*FAILED: 2 mypy error\\(s\\) \\(mypy.ini\\), 0 flake8"
  FAIL_REGULAR_EXPRESSION "txt:1[23]:")
add_test(NAME lint.python.detects_flake8
  COMMAND ${TOLL_PYTHON} ${TOLL_LINT} python --build ${CMAKE_BINARY_DIR}
          ${CMAKE_SOURCE_DIR}/tests/lint/python_flake8.txt)
set_tests_properties(lint.python.detects_flake8 PROPERTIES
  PASS_REGULAR_EXPRESSION
  "txt:3:1: F401 'os' imported but unused.*txt:7:5: E741.*txt:8:30: E271.*txt:12:101: E501 line too long \\(101 > 100.*FAILED: 0 mypy error\\(s\\) \\(mypy.ini\\), 4 flake8"
  FAIL_REGULAR_EXPRESSION "txt:11:")
set_tests_properties(lint.python lint.python.detects_type_error lint.python.detects_flake8
  PROPERTIES LABELS fast TIMEOUT 60)
