# The tools' own tests (Python's unittest): the record parser behind tools/run,
# and the library and command lines that need no emulator. They import the
# tools' library as the package `lib`, found through PYTHONPATH=tools.
foreach(t records tools)
  add_test(NAME tools.${t} COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/tools/test_${t}.py)
  set_tests_properties(tools.${t} PROPERTIES LABELS fast TIMEOUT 120
    ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
endforeach()

# The book's table generators are modules of the library (lib.walks_tables,
# lib.addrspace_tables, which the tests above run with -m) and stay runnable
# by the file names the book gives: each must answer --help both ways.
add_test(NAME tools.table_modules
  COMMAND sh -c "for m in walks_tables addrspace_tables; do \
    ${TOLL_PYTHON} -m lib.$m --help >/dev/null && \
    ${CMAKE_SOURCE_DIR}/tools/lib/$m.py --help >/dev/null || exit 1; done; echo both ways")
set_tests_properties(tools.table_modules PROPERTIES LABELS fast TIMEOUT 30
  PASS_REGULAR_EXPRESSION "^both ways" ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
