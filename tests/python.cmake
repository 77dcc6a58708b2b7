# The Python package sfctune (python/; included by tests/CMakeLists.txt):
#   python.sfctune   python/tests under pytest (unittest where pytest is missing),
#                    against the build tree's copy of the package and libraries
#   python.install   cmake --install into a scratch prefix, then the installed
#                    copy imported and run against the installed libraries
if(NOT SFC_PYTHON_MODULE OR NOT SFC_PYTHON)
  return()
endif()
set(SFC_PYTHON_TESTS ${PROJECT_SOURCE_DIR}/python/tests)
# The package's environment variables a developer may have set are not the test's.
set(SFC_PYTHON_CLEAN_ENV --unset=SFCTUNE_LIBDIR --unset=SFC_TUNING --unset=SFC_RECORD --unset=SFC_PLATFORM
                         --unset=SFC_VERBOSE --unset=SFC_TUNE --unset=LD_PRELOAD)
add_test(NAME python.sfctune
         COMMAND ${CMAKE_COMMAND} -E env ${SFC_PYTHON_CLEAN_ENV}
                 PYTHONPATH=${PROJECT_BINARY_DIR}/python PYTHONDONTWRITEBYTECODE=1
                 SFCTUNE_TEST_CLI=$<TARGET_FILE:sfc-tune> SFCTUNE_TEST_BLAS=$<TARGET_FILE:sfcblas>
                 SFCTUNE_TEST_TABLE=${PROJECT_SOURCE_DIR}/data/tables/07b60855a84d41f1-f32-t2-quick.table
                 sh ${SFC_PYTHON_TESTS}/run_tests.sh ${SFC_PYTHON} ${SFC_PYTHON_TESTS})
# Not in an SFC_SANITIZE build: python3 cannot load libraries built with ASan.
if(SFC_SANITIZE)
  set_tests_properties(python.sfctune PROPERTIES DISABLED ON)
else()
  add_test(NAME python.install
           COMMAND ${CMAKE_COMMAND} -E env ${SFC_PYTHON_CLEAN_ENV} PYTHONDONTWRITEBYTECODE=1
                   sh ${SFC_PYTHON_TESTS}/install_test.sh ${SFC_PYTHON} ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/sfctune-install ${SFC_PYTHON_INSTALL_DIR})
endif()
