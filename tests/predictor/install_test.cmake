# cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -P install_test.cmake
# Installs the build into WORK_DIR/prefix, then builds and runs two consumers
# of the installed libsfcconf and libsfcgemm: a CMake project using find_package(sfc),
# and a C file compiled with the flags of `pkg-config sfcconf sfcgemm`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}: ${out}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}\n${err}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
include(GNUInstallDirs)
foreach(file include/sfcconf.h include/sfcconf.hpp include/sfcconf_version.h include/sfc_gemm.h bin/sfc-tune
             ${CMAKE_INSTALL_LIBDIR}/libsfcblas.so ${CMAKE_INSTALL_LIBDIR}/libsfcgemm.so
             ${CMAKE_INSTALL_DATADIR}/bash-completion/completions/sfc-tune
             ${CMAKE_INSTALL_DATADIR}/sfc-tune/grids/small.shapes ${EXTRA_INSTALLED})
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "${file} was not installed")
  endif()
endforeach()
file(GLOB shipped_tables ${prefix}/${CMAKE_INSTALL_DATADIR}/sfc-tune/tables/*.table)
if(NOT shipped_tables)
  message(FATAL_ERROR "no tuning tables were installed in ${CMAKE_INSTALL_DATADIR}/sfc-tune/tables")
endif()
# With SFC_TUNING unset the installed program finds the installed tables
# (relative to where it lies), and lists each with its match on this machine.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=SFC_TUNING
                        ${prefix}/bin/sfc-tune db tables
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "share/sfc-tune/tables: folder of")
  message(FATAL_ERROR "sfc-tune db tables did not list the installed tables (${code}):\n${out}\n${err}")
endif()
message(STATUS "installed sfc-tune db tables: ${out}")
# The installed binary finds the installed libsfcconf (its RPATH), not the build's.
run("installed sfc-tune --version" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/sfc-tune --version)

run("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run("run consumer" ${WORK_DIR}/consumer/consumer)

find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config is not installed: its half of the test is skipped")
  return()
endif()
file(GLOB_RECURSE pc_file ${prefix}/*/sfcconf.pc)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs sfcconf sfcgemm OUTPUT_VARIABLE flags
                RESULT_VARIABLE code OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find sfcconf in ${pc_dir}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run("compile with pkg-config flags (${flags})" cc ${CONSUMER_DIR}/main.c ${flags}
    -o ${WORK_DIR}/c_consumer)
list(FILTER flags INCLUDE REGEX "^-L")
string(REGEX REPLACE "^-L" "" libdir "${flags}")
# SFC_TUNING unset: libsfcgemm opens the tables installed beside it (and
# SFC_VERBOSE names them, used or, on a machine none matches, passed over).
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=SFC_TUNING --unset=SFC_TUNE SFC_VERBOSE=1
                        LD_LIBRARY_PATH=${libdir} ${WORK_DIR}/c_consumer
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the C consumer failed (${code}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "share/sfc-tune/tables")
  message(FATAL_ERROR "with SFC_TUNING unset, libsfcgemm did not look at the installed tables:\n${err}")
endif()
message(STATUS "run C consumer, SFC_TUNING unset: ${err}")
# The old package and pkg-config names still work for this release.
run("configure consumer (old name sfcconf)" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-old
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release -DSFC_CONSUMER_PACKAGE=sfcconf)
run("build consumer (old name sfcconf)" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-old)
run("run consumer (old name sfcconf)" ${WORK_DIR}/consumer-old/consumer)
