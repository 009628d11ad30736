# cmake -DBUILD_DIR=<tensorclass build> -DSOURCE_DIR=<tests/downstream> -DWORK_DIR=<scratch>
#       -DGENERATOR=<generator> [-DSANITIZE_FLAGS="<flags>"] -P run_downstream.cmake
# Installs the build into WORK_DIR/prefix, then configures, builds and runs the downstream project
# against that prefix only. SANITIZE_FLAGS (a TC_SANITIZE build's) compile and link the downstream
# project too: the installed runtime is instrumented and needs the sanitizer runtimes.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    "-DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/downstream_app)
