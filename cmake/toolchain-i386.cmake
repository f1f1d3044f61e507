# Cross toolchain for Toll's i386 kernel and its user programs: clang and ld.lld.
# Targets pick their own --target and flags through the helpers in Toll.cmake.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR i386)
set(TOLL_ARCH i386 CACHE STRING "Toll architecture" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
