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
