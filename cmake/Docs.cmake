# The API reference: `cmake --build build --target docs` runs Doxygen over the public
# headers and writes HTML to build/docs/html/ (index.html). Not part of `all`. Any Doxygen warning
# (an undocumented public name, a malformed comment) fails the target; names in `detail`
# namespaces and TC_DETAIL_* macros are implementation and left out.

# The headers Install.cmake installs (distributed.h whether or not this build has the library).
set(TC_DOCS_INPUT
    ${PROJECT_SOURCE_DIR}/docs/reference.dox
    ${PROJECT_SOURCE_DIR}/runtime/include/tensordict
    ${PROJECT_SOURCE_DIR}/nn/include/tensordict/nn
    ${PROJECT_SOURCE_DIR}/distributed/include/tensordict
    ${PROJECT_SOURCE_DIR}/store/include/tensordict
    ${PROJECT_SOURCE_DIR}/llm/include/tensordict/llm
    ${PROJECT_SOURCE_DIR}/llm/include/tensorclass/llm)

find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "Doxygen not found: the `docs` target only reports it (apt-get install doxygen)")
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo "docs: Doxygen not found (Debian: doxygen)"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
  return()
endif()

set(TC_DOCS_OUTPUT_DIR ${PROJECT_BINARY_DIR}/docs)
list(JOIN TC_DOCS_INPUT "\" \"" TC_DOCS_INPUT_LIST)
configure_file(${PROJECT_SOURCE_DIR}/cmake/Doxyfile.in ${TC_DOCS_OUTPUT_DIR}/Doxyfile @ONLY)
add_custom_target(docs
  # Fresh output each time, so that pages of removed names do not linger.
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${TC_DOCS_OUTPUT_DIR}/html
  COMMAND Doxygen::doxygen ${TC_DOCS_OUTPUT_DIR}/Doxyfile
  COMMAND ${CMAKE_COMMAND} -E echo "docs: ${TC_DOCS_OUTPUT_DIR}/html/index.html"
  WORKING_DIRECTORY ${TC_DOCS_OUTPUT_DIR}
  COMMENT "Doxygen: API reference of the public headers"
  VERBATIM)
