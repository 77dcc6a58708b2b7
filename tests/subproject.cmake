# The build as others use it (included by tests/CMakeLists.txt):
#   build.subproject   a parent project configures sfc-tune with add_subdirectory()
#                      without the subproject touching the parent's settings
add_test(NAME build.subproject
         COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_SOURCE_DIR}/subproject
                 -B ${CMAKE_CURRENT_BINARY_DIR}/subproject -DSFC_SOURCE_DIR=${PROJECT_SOURCE_DIR})
