# Cross toolchain for Toll's arm64 kernel and its user programs: clang and ld.lld.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TOLL_ARCH arm64 CACHE STRING "Toll architecture" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
