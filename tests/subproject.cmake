# The build as others use it (included by tests/CMakeLists.txt):
#   build.subproject   a parent project (tests/subproject/) configures sfc-tune with
#                      add_subdirectory() without the subproject touching the parent's
#                      settings; configured afresh each run
set(sfc_parent_dir ${CMAKE_CURRENT_BINARY_DIR}/subproject-parent)
add_test(NAME build.subproject
         COMMAND bash -c "rm -rf \"$1\" && \"$2\" -S \"$3\" -B \"$1\" -DSFC_SOURCE_DIR=\"$4\"" configure
                 ${sfc_parent_dir} ${CMAKE_COMMAND} ${CMAKE_CURRENT_SOURCE_DIR}/subproject ${PROJECT_SOURCE_DIR})
