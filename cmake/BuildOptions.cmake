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

option(SFC_NATIVE "Compile the project's own code with -march=native" OFF)
option(SFC_WERROR "Treat compiler warnings as errors" OFF)
option(SFC_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

add_library(sfc_build_options INTERFACE)
target_compile_options(sfc_build_options INTERFACE
  -Wall -Wextra -Wshadow -Wconversion
  $<$<BOOL:${SFC_WERROR}>:-Werror>
  $<$<BOOL:${SFC_NATIVE}>:-march=native>)

if(SFC_SANITIZE)
  # Global on purpose: every object file and the executables linking them must
  # agree, and libraries built with and without ASan cannot be mixed. Only the
  # top-level build may decide that for everything it compiles.
  if(NOT PROJECT_IS_TOP_LEVEL)
    message(FATAL_ERROR "SFC_SANITIZE is for building sfc-tune on its own, not inside another project")
  endif()
  set(sfc_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${sfc_sanitize_flags} -g1)  # line tables: enough for reports, cheaper to build
  add_link_options(${sfc_sanitize_flags})
endif()
