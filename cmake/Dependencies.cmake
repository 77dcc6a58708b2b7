# Every third-party dependency is found here, once, and each failure names the
# Debian package that provides it (scripts/setup.sh installs them all).

macro(sfc_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "sfc-tune needs ${what}: install the Debian package '${package}' "
                        "(or run scripts/setup.sh, which installs every dependency).")
  endif()
endmacro()

find_package(OpenMP QUIET)
sfc_require(OpenMP_CXX_FOUND "OpenMP" "libgomp1 (part of g++)")

# LIBXSMM 1.17 ships static libraries only. libxsmm.a needs sgemm_/dgemm_, which
# libxsmmnoblas provides; pkg-config gives the wrong order for static linking.
find_path(LIBXSMM_INCLUDE_DIR libxsmm.h)
find_library(LIBXSMM_LIBRARY NAMES libxsmm.a xsmm)
find_library(LIBXSMM_NOBLAS_LIBRARY NAMES libxsmmnoblas.a xsmmnoblas)
if(LIBXSMM_INCLUDE_DIR AND LIBXSMM_LIBRARY AND LIBXSMM_NOBLAS_LIBRARY)
  set(LIBXSMM_FOUND TRUE)
endif()
sfc_require(LIBXSMM_FOUND "LIBXSMM" "libxsmm-dev")
# The no-BLAS stubs are a fallback: LIBXSMM needs sgemv_/dgemv_ from them, and
# their object brings sgemm_/dgemm_ along, which the drop-in (blas/) defines
# itself. A copy of the archive whose sgemm_ and dgemm_ are weak lets a real
# definition win without a clash (no --allow-multiple-definition); where there
# is none, the weak stubs are linked as the strong ones were.
set(SFC_LIBXSMM_NOBLAS_WEAK ${PROJECT_BINARY_DIR}/libxsmm/libxsmmnoblas-weak.a)
if(NOT CMAKE_OBJCOPY)
  find_program(CMAKE_OBJCOPY NAMES objcopy llvm-objcopy)
endif()
sfc_require(CMAKE_OBJCOPY "objcopy" "binutils")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${LIBXSMM_NOBLAS_LIBRARY})
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/libxsmm)
# Made at each configure, replaced only when it differs: a reconfigure must not
# relink everything that links LIBXSMM.
execute_process(COMMAND ${CMAKE_OBJCOPY} --weaken-symbol=sgemm_ --weaken-symbol=dgemm_ ${LIBXSMM_NOBLAS_LIBRARY}
                        ${SFC_LIBXSMM_NOBLAS_WEAK}.new
                RESULT_VARIABLE sfc_objcopy_result ERROR_VARIABLE sfc_objcopy_error)
if(NOT sfc_objcopy_result EQUAL 0)
  message(FATAL_ERROR "sfc-tune: ${CMAKE_OBJCOPY} could not copy ${LIBXSMM_NOBLAS_LIBRARY}: ${sfc_objcopy_error}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${SFC_LIBXSMM_NOBLAS_WEAK}.new ${SFC_LIBXSMM_NOBLAS_WEAK})
file(REMOVE ${SFC_LIBXSMM_NOBLAS_WEAK}.new)
add_library(sfc_libxsmm INTERFACE)
target_include_directories(sfc_libxsmm SYSTEM INTERFACE ${LIBXSMM_INCLUDE_DIR})
target_link_libraries(sfc_libxsmm INTERFACE ${LIBXSMM_LIBRARY} ${SFC_LIBXSMM_NOBLAS_WEAK} pthread dl m)

# hwloc reads the topology and cache sizes of the platform fingerprint.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
endif()
sfc_require(HWLOC_FOUND "hwloc" "libhwloc-dev")

find_package(SQLite3 QUIET)
sfc_require(SQLite3_FOUND "SQLite 3" "libsqlite3-dev")

find_package(spdlog CONFIG QUIET)
sfc_require(spdlog_FOUND "spdlog" "libspdlog-dev")

find_path(NANOFLANN_INCLUDE_DIR nanoflann.hpp)
sfc_require(NANOFLANN_INCLUDE_DIR "nanoflann" "libnanoflann-dev")
add_library(sfc_nanoflann INTERFACE)
target_include_directories(sfc_nanoflann SYSTEM INTERFACE ${NANOFLANN_INCLUDE_DIR})

find_package(CLI11 CONFIG QUIET)
sfc_require(CLI11_FOUND "CLI11" "libcli11-dev")

find_package(nlohmann_json CONFIG QUIET)
sfc_require(nlohmann_json_FOUND "nlohmann-json" "nlohmann-json3-dev")

if(SFC_BUILD_TESTS)
  find_package(doctest CONFIG QUIET)
  sfc_require(doctest_FOUND "doctest" "doctest-dev")
endif()
