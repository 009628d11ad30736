# cmake -DBUILD_DIR=<tensorclass build> -DSOURCE_DIR=<tests/downstream> -DWORK_DIR=<scratch>
#       -DCHECKOUT=<repository root> -DREADME=<README.md> -DGENERATOR=<generator> -DCXX=<compiler>
#       -DCXX_STANDARD=<17|20> [-DSANITIZE_FLAGS="<flags>"] -P run_downstream.cmake
# Installs the build into WORK_DIR/prefix; compiles each installed generated header on its own
# with the plain compiler (no CMake, -Wall -Wextra -Werror); then configures, builds and runs the
# downstream project against that prefix only. SANITIZE_FLAGS (a TC_SANITIZE build's) compile and
# link the downstream code too: the installed runtime is instrumented and needs the sanitizer
# runtimes.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The exported targets name no path of this machine and no build-only target.
file(GLOB exports ${prefix}/lib*/cmake/TensorClass/TensorClassTargets*.cmake)
foreach(export ${exports})
  file(READ ${export} text)
  foreach(forbidden "/usr/" "${BUILD_DIR}" "tc_warnings")
    string(FIND "${text}" "${forbidden}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${export} mentions '${forbidden}'")
    endif()
  endforeach()
endforeach()

file(GLOB shipped ${prefix}/include/tensorclass/generated/*.h)
if(NOT shipped)
  message(FATAL_ERROR "no generated headers installed under ${prefix}/include/tensorclass/generated")
endif()
foreach(header ${shipped})
  get_filename_component(name ${header} NAME)
  file(WRITE ${WORK_DIR}/include_${name}.cpp "#include \"${name}\"\n")
  run(${CXX} -std=c++${CXX_STANDARD} -fsyntax-only -Wall -Wextra -Werror -I${prefix}/include
      -I${prefix}/include/tensorclass/generated ${WORK_DIR}/include_${name}.cpp)
endforeach()

# README.md's commands for the installed package, run as written (the block after its
# "readme: installed-package commands" marker, $PWD the checkout), against this prefix: they
# configure and build tests/downstream into WORK_DIR/build and run downstream_app.
file(READ ${README} readme)
string(FIND "${readme}" "<!-- readme: installed-package commands" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README}: no 'readme: installed-package commands' block")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
string(REGEX MATCH "```sh\n([^`]*)```" block "${readme}")
string(REPLACE "$PWD/install" "${prefix}" commands "${CMAKE_MATCH_1}")
string(REPLACE "/tmp/downstream" "${WORK_DIR}/build" commands "${commands}")
# The generator and this build's sanitizer flags reach the README's plain `cmake` through the
# environment CMake reads at a first configure.
set(ENV{CMAKE_GENERATOR} ${GENERATOR})
set(ENV{CXXFLAGS} "${SANITIZE_FLAGS}")
set(ENV{LDFLAGS} "${SANITIZE_FLAGS}")
execute_process(COMMAND sh -ec "${commands}" WORKING_DIRECTORY ${CHECKOUT}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "README.md's installed-package commands failed (${status}):\n"
                      "${commands}\n${output}")
endif()
run(${WORK_DIR}/build/downstream_nn)
if(EXISTS ${WORK_DIR}/build/downstream_dist)
  file(REMOVE ${WORK_DIR}/dist_store)
  run(${WORK_DIR}/build/downstream_dist ${WORK_DIR}/dist_store)
endif()

# Included schemas get their headers without being listed, and a build with nothing changed does
# not rerun tcgen, with Ninja (where installed) in a project predating CMake 3.20's depfile policy.
find_program(NINJA ninja)
set(includes_generator ${GENERATOR})
if(NINJA)
  set(includes_generator Ninja)
endif()
set(includes_build ${WORK_DIR}/includes)
set(includes_source ${WORK_DIR}/includes_source)  # a copy: the test edits its schema
file(COPY ${SOURCE_DIR}/includes/ DESTINATION ${includes_source})
run(${CMAKE_COMMAND} -S ${includes_source} -B ${includes_build} -G ${includes_generator}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    "-DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_FLAGS}")
run(${CMAKE_COMMAND} --build ${includes_build})
run(${includes_build}/includes_app)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${includes_build} OUTPUT_VARIABLE again
                RESULT_VARIABLE status)
string(FIND "${again}" "tcgen" reran)
if(NOT status EQUAL 0 OR NOT reran EQUAL -1)
  message(FATAL_ERROR "a second ${includes_generator} build reran tcgen:\n${again}")
endif()

# An edit of the included-only schema reaches the program in the first build after it: the
# including header records the fingerprint of the header it includes, so it changes too, and a
# source that includes the included schema's header alone depends on tcgen's changed-stamp.
file(APPEND ${includes_source}/common.yaml "      - {name: extra, type: \"optional[tensor]\"}\n")
run(${CMAKE_COMMAND} --build ${includes_build})
execute_process(COMMAND ${includes_build}/includes_app OUTPUT_VARIABLE fields RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT fields STREQUAL "Step fields: 2 (direct.cpp: the same Step::Args)\n")
  message(FATAL_ERROR "after common.yaml gained a field, one ${includes_generator} build gave "
                      "a program that prints '${fields}' (expected 'Step fields: 2 (direct.cpp: the same Step::Args)')")
endif()

