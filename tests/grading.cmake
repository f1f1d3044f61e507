# Grading: lab regions and rubrics (fast), and the hostile batch, which grades
# the reference, the starter and every hostile submission once with tools/grade.
add_test(NAME grading.regions
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/test_regions.py)
add_test(NAME grading.labs_consistent COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/grade --check)
add_test(NAME grading.hostile_batch
  COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tests/grading/check_batch.py
          --work ${CMAKE_BINARY_DIR}/grading-check -j 2)
# The batch builds two trees at once: give it both cores of the machine.
set_tests_properties(grading.hostile_batch PROPERTIES TIMEOUT 600 PROCESSORS 2)
set_tests_properties(grading.regions grading.labs_consistent PROPERTIES TIMEOUT 60)
