# The db tests open database files with raw SQLite too (to damage them, or to
# fake a newer schema), so the test binary links SQLite directly.
target_link_libraries(sfc_tests PRIVATE SQLite::SQLite3)
