# The book: doxygen + sphinx-build -W through tools/book. Any warning (a
# broken reference, a function the Doxygen XML no longer has, a malformed doc
# comment) fails this test, so `make check` fails on broken documentation.
add_test(NAME book.build
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR})
set_tests_properties(book.build PROPERTIES TIMEOUT 300 LABELS book)
