# The book: doxygen + sphinx-build -W through tools/book. Any warning (a
# broken reference, a function the Doxygen XML no longer has, a malformed doc
# comment, a number typed by hand into the prose, a figure that fails to
# draw, a command that does not exist) fails this test, so `make check`
# fails on broken documentation.
add_test(NAME book.build
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR})
set_tests_properties(book.build PROPERTIES TIMEOUT 300 LABELS book FIXTURES_SETUP book_html)

# The rule behind the book's numbers can fail: a page with numbers typed by
# hand and a reference to a missing result is refused, each one named, and a
# page whose numbers are all sourced is accepted.
add_test(NAME book.numbers.lint_refuses_typed_numbers
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_lint.py)
set_tests_properties(book.numbers.lint_refuses_typed_numbers PROPERTIES TIMEOUT 60 LABELS "book;fast")

# The numbers the prose quotes are the kernel's numbers today: the benchmark
# results in book/generated/results.csv equal the fresh --quick run of
# bench.budgets, and every run of book/measurements.toml, booted again,
# prints the METRICs of book/generated/metrics.csv.
add_test(NAME book.numbers.fresh
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR} --check-fresh
          --bench-results ${CMAKE_BINARY_DIR}/bench-budgets/results.csv)
set_tests_properties(book.numbers.fresh PROPERTIES TIMEOUT 180 LABELS book
  FIXTURES_REQUIRED bench_results)

# That comparison can fail: one number that moved is found and named.
add_test(NAME book.numbers.fresh_finds_drift
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --check-fresh --no-boot
          --book-results ${CMAKE_SOURCE_DIR}/tests/bench/over_budget.csv
          --bench-results ${CMAKE_SOURCE_DIR}/tests/bench/drifted.csv)
set_tests_properties(book.numbers.fresh_finds_drift PROPERTIES TIMEOUT 30 LABELS book
  PASS_REGULAR_EXPRESSION "3/1:lat_pipe.roundtrip: the book says 2000 instr, the kernel now measures 2001 instr")

# The walk and cost-model tables agree with the walk counts and results they
# are rendered from, and the check can fail.
add_test(NAME book.walks.fresh
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/walks-tables render --check)
set_tests_properties(book.walks.fresh PROPERTIES TIMEOUT 30 LABELS "book;fast")
# ... and the QEMU walk counts in walks.csv are today's kernel's.
add_test(NAME book.walks.measured_fresh
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/walks-tables fresh --build ${CMAKE_BINARY_DIR})
set_tests_properties(book.walks.measured_fresh PROPERTIES TIMEOUT 180 LABELS book)

# The API entries rendered from doc comments say what the comments say: no
# escape backslash or entity text the reader sees, no "--" turned into a
# dash, no entry without a description, no public member of a rendered struct
# left out for want of a comment. The self-test plants each defect and runs
# book/doxygen_filter.py and Doxygen over the comments that used to break.
add_test(NAME book.api_docs
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_api_docs.py ${CMAKE_BINARY_DIR})
set_tests_properties(book.api_docs PROPERTIES TIMEOUT 60 LABELS book FIXTURES_REQUIRED book_html)
add_test(NAME book.api_docs.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_api_docs.py --self-test)
set_tests_properties(book.api_docs.finds_planted PROPERTIES TIMEOUT 60 LABELS "book;fast"
  SKIP_RETURN_CODE 77)

# The commands of the book marked :run: (lab handouts, exercises) work as
# written; every other command was checked for its tool and options by
# book.build.
add_test(NAME book.commands
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR} --run-commands)
set_tests_properties(book.commands PROPERTIES TIMEOUT 300 LABELS book FIXTURES_REQUIRED book_html)
# A ctest command of a handout that selects no test (a renamed test) does not
# work as written: of a planted pair, the dead one is found, the live one not.
add_test(NAME book.commands.finds_dead_ctest
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR}
          --run-commands ${CMAKE_SOURCE_DIR}/tests/book/dead_ctest_command.json)
set_tests_properties(book.commands.finds_dead_ctest PROPERTIES TIMEOUT 60 LABELS book
  PASS_REGULAR_EXPRESSION "FAIL planted.rst:2: .*selects no test.*\n.*FAILED: 1 of 2 command")

# The repository stands alone: no file points at documents outside it; and
# the check finds a planted reference.
add_test(NAME book.repository_stands_alone
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/stands_alone.py)
add_test(NAME book.repository_stands_alone.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/stands_alone.py --self-test)
set_tests_properties(book.repository_stands_alone book.repository_stands_alone.finds_planted
  PROPERTIES TIMEOUT 60 LABELS "book;fast")

# The HTML in a real browser: headless Chromium opens every page and fails
# on a broken link, a missing image, a JavaScript error or an empty page;
# the second test plants one defect of each kind and requires all to be
# found. Without Chromium both report SKIP (exit 77), never PASS.
add_test(NAME book.browser
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/browser_check.py ${CMAKE_BINARY_DIR}/book/html)
add_test(NAME book.browser.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/browser_check.py --self-test)
set_tests_properties(book.browser book.browser.finds_planted PROPERTIES TIMEOUT 180 LABELS book
  ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools
  SKIP_RETURN_CODE 77)
set_tests_properties(book.browser PROPERTIES FIXTURES_REQUIRED book_html)

# Lab solutions stay out of the book, and the book builds in every starter:
# each lab's starter tree (as tools/mklab writes it) builds its book with -W.
# Figures and, when no doc comment lies in a lab region, the Doxygen XML are
# reused from book.build's output, since no lab region can change them.
add_test(NAME book.starters
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR} --check-starters)
set_tests_properties(book.starters PROPERTIES TIMEOUT 600 LABELS book FIXTURES_REQUIRED book_html)

# The figures as a reader meets them: each numbered and referred to by its
# number, no wider than the text column, and no text below a readable size;
# the self-test plants one defect of each kind and requires every one found.
add_test(NAME book.figures
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_figures.py ${CMAKE_BINARY_DIR}/book/html)
set_tests_properties(book.figures PROPERTIES TIMEOUT 60 LABELS book FIXTURES_REQUIRED book_html)
add_test(NAME book.figures.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_figures.py --self-test)
set_tests_properties(book.figures.finds_planted PROPERTIES TIMEOUT 60 LABELS "book;fast")

# No chapter answers a graded lab question: each reference answer of
# labs/*/results.toml is compared with the chapters' sources and the built
# chapters (the excerpts' lab hints included), in its own words and by the
# conclusions book/instructor/answer-claims.toml lists for it; the self-test
# plants a copied answer and a conclusion in other words and requires both.
add_test(NAME book.answers_stay_in_the_labs
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_answers.py ${CMAKE_BINARY_DIR}/book/html)
set_tests_properties(book.answers_stay_in_the_labs PROPERTIES TIMEOUT 60 LABELS book
  FIXTURES_REQUIRED book_html)
add_test(NAME book.answers_stay_in_the_labs.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_answers.py --self-test)
set_tests_properties(book.answers_stay_in_the_labs.finds_planted PROPERTIES TIMEOUT 60
  LABELS "book;fast")

# The instructor edition (make book-instructor): the book with every lab's
# solution, the reference answers, the exercises' answer notes and the
# grading notes, built with -W like the student book.
add_test(NAME book.instructor
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/book --build ${CMAKE_BINARY_DIR} --instructor)
set_tests_properties(book.instructor PROPERTIES TIMEOUT 300 LABELS book
  FIXTURES_SETUP book_instructor_html)
# ... and it stays the instructor's: the student book holds no solution, no
# reference answer and no instructor page, no lab's starter holds its own
# lab's solution or answers or book/instructor/, and the instructor edition
# holds them all (which proves the search finds them in a built page); the
# self-test plants each and requires it found.
add_test(NAME book.instructor.stays_out
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_instructor.py ${CMAKE_BINARY_DIR})
set_tests_properties(book.instructor.stays_out PROPERTIES TIMEOUT 180 LABELS book
  FIXTURES_REQUIRED "book_html;book_instructor_html" ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
add_test(NAME book.instructor.stays_out.finds_planted
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/book/check_instructor.py --self-test)
set_tests_properties(book.instructor.stays_out.finds_planted PROPERTIES TIMEOUT 60
  LABELS "book;fast" ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
