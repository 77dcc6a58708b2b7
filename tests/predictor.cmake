# libsfcconf beyond the doctest suite (included by tests/CMakeLists.txt):
#   predictor.fixture   writes the tuning tables the next two open
#   predictor.c_api     tests/test_sfcconf_c.c, compiled as C, against the shared library
#   predictor.tsan      concurrent queries, the library's sources rebuilt with
#                       ThreadSanitizer (label tsan; runs under plain ctest too)
#   predictor.install   cmake --install, then a consumer found through
#                       find_package(sfcconf) and one through pkg-config
#   predictor.latency   the query-latency benchmark (label benchmark; prints, never fails on time)
set(SFC_PREDICTOR_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/predictor)
set(SFC_SFCCONF_FIXTURE_DIR ${CMAKE_CURRENT_BINARY_DIR}/sfcconf-fixture)

add_executable(sfcconf_fixture ${SFC_PREDICTOR_TESTS}/fixture.cpp)
target_link_libraries(sfcconf_fixture PRIVATE sfc_predictor_core sfc_db)
target_link_libraries(sfcconf_fixture PRIVATE sfc_build_options)
add_test(NAME predictor.fixture COMMAND sfcconf_fixture ${SFC_SFCCONF_FIXTURE_DIR})
set_tests_properties(predictor.fixture PROPERTIES FIXTURES_SETUP sfcconf_tables)

add_executable(sfcconf_c_test ${CMAKE_CURRENT_SOURCE_DIR}/test_sfcconf_c.c)
set_target_properties(sfcconf_c_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_link_libraries(sfcconf_c_test PRIVATE sfcconf m)
target_link_libraries(sfcconf_c_test PRIVATE sfc_build_options)
add_test(NAME predictor.c_api COMMAND sfcconf_c_test ${SFC_SFCCONF_FIXTURE_DIR})
set_tests_properties(predictor.c_api PROPERTIES FIXTURES_REQUIRED sfcconf_tables)

# Not in an SFC_SANITIZE build: ThreadSanitizer cannot be combined with the
# AddressSanitizer every object there is compiled with.
if(NOT SFC_SANITIZE)
  # The ThreadSanitizer build compiles libsfcconf's sources (and the predictor
  # under them) again with -fsanitize=thread; the libraries below them (table
  # loading, the platform probe) only run before the threads start.
  get_property(SFC_PREDICTOR_CORE_SOURCES GLOBAL PROPERTY SFC_PREDICTOR_CORE_SOURCES)
  get_property(SFC_SFCCONF_SOURCES GLOBAL PROPERTY SFC_SFCCONF_SOURCES)
  add_executable(sfcconf_tsan ${SFC_PREDICTOR_TESTS}/tsan_queries.cpp ${SFC_PREDICTOR_CORE_SOURCES}
                              ${SFC_SFCCONF_SOURCES})
  target_include_directories(sfcconf_tsan PRIVATE ${PROJECT_SOURCE_DIR}/predictor/include
                                                  ${PROJECT_BINARY_DIR}/predictor/include)
  target_link_libraries(sfcconf_tsan PRIVATE sfc_db sfc_model sfc_core sfc_nanoflann)
  target_link_libraries(sfcconf_tsan PRIVATE sfc_build_options)
  target_compile_options(sfcconf_tsan PRIVATE -fsanitize=thread -g -O1)
  target_link_options(sfcconf_tsan PRIVATE -fsanitize=thread)
  add_test(NAME predictor.tsan
           COMMAND sfcconf_tsan ${SFC_SFCCONF_FIXTURE_DIR}/this_machine.sfctable)
  set_tests_properties(predictor.tsan PROPERTIES FIXTURES_REQUIRED sfcconf_tables LABELS tsan
                       ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1")
endif()

add_executable(sfcconf_latency ${SFC_PREDICTOR_TESTS}/query_latency.cpp)
target_link_libraries(sfcconf_latency PRIVATE sfc_predictor_core sfc_db sfcconf)
target_link_libraries(sfcconf_latency PRIVATE sfc_build_options)
add_test(NAME predictor.latency COMMAND sfcconf_latency)
set_tests_properties(predictor.latency PROPERTIES LABELS benchmark)

# Not in an SFC_SANITIZE build either: a consumer built without ASan cannot
# load a library built with it.
if(NOT SFC_SANITIZE)
  # Install into a scratch prefix and build a C consumer against it both ways.
  add_test(NAME predictor.install
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/sfcconf-install
                   -DCONSUMER_DIR=${SFC_PREDICTOR_TESTS}/consumer
                   -DEXTRA_INSTALLED=share/man/man1/sfc-tune.1
                   -P ${SFC_PREDICTOR_TESTS}/install_test.cmake)
endif()

# libsfcgemm's C API (sfc_gemm.h), compiled as C99 against the shared library.
add_executable(sfc_gemm_c_test ${CMAKE_CURRENT_SOURCE_DIR}/test_sfc_gemm_c.c)
set_target_properties(sfc_gemm_c_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_link_libraries(sfc_gemm_c_test PRIVATE sfcgemm m)
add_test(NAME gemm.c_api COMMAND sfc_gemm_c_test)

# fork() after GEMMs on a team, and the caller's FP flags (test_fork_c.c), on
# a table with unmeasured configurations; once more with online tuning on.
add_executable(sfc_fork_c_test ${CMAKE_CURRENT_SOURCE_DIR}/test_fork_c.c)
set_target_properties(sfc_fork_c_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_link_libraries(sfc_fork_c_test PRIVATE sfcgemm m)
add_test(NAME gemm.fork COMMAND sfc_fork_c_test)
add_test(NAME gemm.fork_online COMMAND sfc_fork_c_test)
set_tests_properties(gemm.fork gemm.fork_online PROPERTIES FIXTURES_REQUIRED sfcconf_tables TIMEOUT 300)
set_tests_properties(gemm.fork PROPERTIES
  ENVIRONMENT "OMP_NUM_THREADS=2;SFC_TUNING=${SFC_SFCCONF_FIXTURE_DIR}/partial.sfctable")
set_tests_properties(gemm.fork_online PROPERTIES
  ENVIRONMENT "OMP_NUM_THREADS=2;SFC_TUNING=${SFC_SFCCONF_FIXTURE_DIR}/partial.sfctable;SFC_TUNE=online;SFC_TUNE_DB=${CMAKE_CURRENT_BINARY_DIR}/fork_online.db;SFC_TUNE_BUDGET_MS=50")

# libsfcblas under a real client: Debian's numpy with LD_PRELOAD (scripts/setup.sh
# installs python3-numpy). Not in an SFC_SANITIZE build: a preloaded library
# cannot bring ASan's runtime into a process that started without it.
if(NOT SFC_SANITIZE)
  add_test(NAME blas.numpy COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/blas/numpy_test.sh $<TARGET_FILE:sfcblas>)
  # numpy's fork modes and np.seterr(all='raise') under the drop-in (blas/fork_fp_test.py),
  # on a table with unmeasured configurations; once more with online tuning on.
  set(SFC_FORK_FP_ENV "LD_PRELOAD=$<TARGET_FILE:sfcblas>;OMP_NUM_THREADS=2;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/blas"
                      "SFC_TUNING=${SFC_SFCCONF_FIXTURE_DIR}/partial.sfctable")
  add_test(NAME blas.fork_fp COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/blas/fork_fp_test.py 5)
  add_test(NAME blas.fork_fp_online COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/blas/fork_fp_test.py 5)
  set_tests_properties(blas.fork_fp blas.fork_fp_online PROPERTIES FIXTURES_REQUIRED sfcconf_tables TIMEOUT 600)
  set_tests_properties(blas.fork_fp PROPERTIES ENVIRONMENT "${SFC_FORK_FP_ENV}")
  # Debian's PyTorch (scripts/test.sh installs python3-torch): a transformer layer with and without the drop-in.
  add_test(NAME blas.torch COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/blas/torch_test.py
                                   $<TARGET_FILE:sfcblas>)
  set_tests_properties(blas.torch PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 ENVIRONMENT "OMP_NUM_THREADS=2")
  set_tests_properties(blas.fork_fp_online PROPERTIES ENVIRONMENT
    "${SFC_FORK_FP_ENV};SFC_TUNE=online;SFC_TUNE_DB=${CMAKE_CURRENT_BINARY_DIR}/fork_fp_online.db;SFC_TUNE_BUDGET_MS=50")
endif()
add_executable(sfcblas_drop_in_test ${CMAKE_CURRENT_SOURCE_DIR}/blas/drop_in_test.c)
set_target_properties(sfcblas_drop_in_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_link_libraries(sfcblas_drop_in_test PRIVATE sfcblas m)
add_test(NAME blas.drop_in COMMAND sfcblas_drop_in_test)
# xerbla's lines for the two refused calls, with the BLAS parameter numbers.
set_tests_properties(blas.drop_in PROPERTIES ENVIRONMENT "SFC_BLAS_MIN_FLOPS=0;SFC_BLAS_MIN_DIM=0"
  PASS_REGULAR_EXPRESSION "cblas_dgemm parameter number 9 had an illegal value.*SGEMM parameter number 1 had an illegal value.*all checks passed")

# The child process of the recording tests (tests/test_record.cpp): libsfcconf
# queries or sfc::gemm calls, as a program under SFC_RECORD / SFC_VERBOSE runs them.
add_executable(sfc_record_driver ${SFC_PREDICTOR_TESTS}/record_driver.cpp)
target_link_libraries(sfc_record_driver PRIVATE sfc_runtime sfcconf)
target_link_libraries(sfc_record_driver PRIVATE sfc_build_options)
target_compile_definitions(sfc_tests PRIVATE SFC_RECORD_DRIVER="$<TARGET_FILE:sfc_record_driver>")
add_dependencies(sfc_tests sfc_record_driver)
