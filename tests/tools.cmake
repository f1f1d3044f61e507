# The tools' own tests (Python's unittest): the record parser behind tools/run,
# and the library and command lines that need no emulator. They import the
# tools' library as the package `lib`, found through PYTHONPATH=tools.
foreach(t records tools)
  add_test(NAME tools.${t} COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/tools/test_${t}.py)
  set_tests_properties(tools.${t} PROPERTIES LABELS fast TIMEOUT 120
    ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
endforeach()
