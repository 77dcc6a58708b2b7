# The command line beyond the doctest suite (included by tests/CMakeLists.txt):
#   cli.completion   bash completion offers each command's options, values and files
#   cli.manpage      the man page holds every command, the environment and its sections, in 80 columns
#   cli.reference    docs/reference.md is what --help says
add_test(NAME cli.completion
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/completion_test.sh $<TARGET_FILE:sfc-tune>
                 ${PROJECT_SOURCE_DIR}/cli/share/sfc-tune.bash-completion)
add_test(NAME cli.manpage COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/manpage_test.sh $<TARGET_FILE:sfc-tune>
                                  ${PROJECT_BINARY_DIR}/cli/sfc-tune.1)
# docs/reference.md is generated from the binary's --help: stale is a failure.
add_test(NAME cli.reference COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/make-reference.sh --check $<TARGET_FILE:sfc-tune>)
