# The tools' own tests (Python's unittest): the record parser behind tools/run,
# and the library and command lines that need no emulator. They import the
# tools' library as the package `lib`, found through PYTHONPATH=tools.
foreach(t records tools)
  add_test(NAME tools.${t} COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/tools/test_${t}.py)
  set_tests_properties(tools.${t} PROPERTIES LABELS fast TIMEOUT 120
    ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
endforeach()

# The book's table generators are programs (tools/walks-tables,
# tools/addrspace-tables) over modules of the library that are no programs
# themselves: each program answers --help, and neither module runs as one.
add_test(NAME tools.table_programs
  COMMAND sh -c "for m in walks addrspace; do \
    ${CMAKE_SOURCE_DIR}/tools/$m-tables --help >/dev/null || exit 1; \
    ${TOLL_PYTHON} -m lib.\${m}_tables --help 2>/dev/null | grep -q usage && exit 1; \
    done; echo programs, not modules")
set_tests_properties(tools.table_programs PROPERTIES LABELS fast TIMEOUT 30
  PASS_REGULAR_EXPRESSION "^programs, not modules" ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
