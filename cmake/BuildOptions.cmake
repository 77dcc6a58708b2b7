# How the project's own targets are compiled: one INTERFACE target,
# sfc_build_options, that each of them links PRIVATE, so that nothing here
# reaches a parent project that add_subdirectory()s this one or a consumer of
# the installed libraries.
#
#   SFC_NATIVE    -march=native. Off by default: the GEMM kernels are JIT-generated
#                 by LIBXSMM for the CPU they run on, so only our own loops
#                 (packing, reduction) see it; docs/architecture.md has its gain.
#   SFC_WERROR    warnings are errors (CI turns it on).
#   SFC_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer on every target
#                 of this build, tests included (a Debug-style build for CI).
#   SFC_FUZZ      clang only: every target instrumented for libFuzzer, with ASan and
#                 UBSan, and the fuzz targets of tests/fuzz linked with libFuzzer
#                 (scripts/fuzz.sh builds and runs them).

option(SFC_NATIVE "Compile the project's own code with -march=native" OFF)
option(SFC_WERROR "Treat compiler warnings as errors" OFF)
option(SFC_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(SFC_FUZZ "Instrument everything for libFuzzer (clang) and link the fuzz targets with it" OFF)

add_library(sfc_build_options INTERFACE)
target_compile_options(sfc_build_options INTERFACE
  -Wall -Wextra -Wshadow -Wconversion
  # clang's -Wconversion includes sign conversions, GCC's (for C++) does not:
  # one set of warnings whichever compiles.
  $<$<CXX_COMPILER_ID:Clang>:-Wno-sign-conversion>
  # ... and at -O1 (the sanitizer builds) it reports each `omp simd` loop it
  # leaves scalar, which is no defect of the code.
  $<$<CXX_COMPILER_ID:Clang>:-Wno-pass-failed>
  # GCC takes a unity batch's included .cpp files for headers and flags a
  # class there holding a type of the file's anonymous namespace.
  $<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-subobject-linkage>
  $<$<BOOL:${SFC_WERROR}>:-Werror>
  $<$<BOOL:${SFC_NATIVE}>:-march=native>)

if(SFC_SANITIZE OR SFC_FUZZ)
  # Global on purpose: every object file and the executables linking them must
  # agree, and libraries built with and without ASan cannot be mixed. Only the
  # top-level build may decide that for everything it compiles.
  if(NOT PROJECT_IS_TOP_LEVEL)
    message(FATAL_ERROR "SFC_SANITIZE and SFC_FUZZ are for building sfc-tune on its own, not inside another project")
  endif()
  set(sfc_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(SFC_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      message(FATAL_ERROR "SFC_FUZZ needs clang (libFuzzer): configure with CXX=clang++-14 CC=clang-14")
    endif()
    # Coverage feedback in every library the readers call, libFuzzer's main
    # only in the fuzz targets (tests/fuzz/CMakeLists.txt).
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
  add_compile_options(${sfc_sanitize_flags} -g1)  # line tables: enough for reports, cheaper to build
  add_link_options(${sfc_sanitize_flags})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # The C test programs link C++ libraries: clang's C driver must add the
    # C++ parts of the sanitizer runtimes, and the C++ library they need, too
    # (GCC's does both).
    add_link_options("$<$<LINK_LANGUAGE:C>:-fsanitize-link-c++-runtime;-lstdc++>")
  endif()
endif()

# The shared libraries refuse undefined symbols at link time (-Wl,--no-undefined:
# a missing dependency fails the build, not a user's dlopen()), except under
# clang's sanitizers, whose runtime lives in the executable that loads them.
set(SFC_NO_UNDEFINED -Wl,--no-undefined)
if(SFC_FUZZ OR (SFC_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
  set(SFC_NO_UNDEFINED "")
endif()
