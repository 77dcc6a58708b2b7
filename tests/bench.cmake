# The peers CMake found for `sfc-tune bench` (bench/CMakeLists.txt) must load
# in the tests: there, a skipped peer is a bug in its loader, not a missing
# library.
set(sfc_found_peers "")
foreach(peer OPENBLAS BLIS ONEDNN)
  if(SFC_${peer}_LIBRARY)
    string(TOLOWER ${peer} name)
    string(APPEND sfc_found_peers ",${name},")
  endif()
endforeach()
target_compile_definitions(sfc_tests PRIVATE SFC_TEST_FOUND_PEERS="${sfc_found_peers}")

# The plot renders with a real SVG renderer (rsvg-convert; scripts/setup.sh
# installs librsvg2-bin). Without it the test says so and fails: CI has it.
add_test(NAME bench.plot_png COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench/plot_png_test.sh $<TARGET_FILE:sfc-tune>)

# data/grids/llm*.shapes are what make-llm.py writes: an edit to one without
# the other fails here.
add_test(NAME bench.llm_shapes_generated
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench/llm_shapes_test.sh ${PROJECT_SOURCE_DIR})
