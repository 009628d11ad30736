# tensorclass_generate(TARGET <target> SCHEMAS <files...> [OUTPUT_DIR <dir>] [TEMPLATE_DIR <dir>])
#
# Generates one header per schema (`<schema name>.h`) into OUTPUT_DIR (default
# ${CMAKE_CURRENT_BINARY_DIR}/tensorclass_generated), adds it to <target>'s include path and
# sources, and reruns tcgen only when a schema, an included schema (via the depfile), a template
# or tcgen itself changes. tcgen rewrites a header only when its content changes.
#
# tcgen is the `tcgen` target in the TensorClass build tree, or the installed
# TensorClass::tcgen (found through find_package(TensorClass)).
function(tensorclass_generate)
  cmake_parse_arguments(ARG "" "TARGET;OUTPUT_DIR;TEMPLATE_DIR" "SCHEMAS" ${ARGN})
  if(NOT ARG_TARGET OR NOT ARG_SCHEMAS)
    message(FATAL_ERROR "tensorclass_generate: TARGET and SCHEMAS are required")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/tensorclass_generated)
  endif()
  if(TARGET tcgen)
    set(tcgen_exe $<TARGET_FILE:tcgen>)
    set(tcgen_dep tcgen)
  else()
    set(tcgen_exe $<TARGET_FILE:TensorClass::tcgen>)
    set(tcgen_dep TensorClass::tcgen)
  endif()
  set(template_args "")
  set(template_deps "")
  if(ARG_TEMPLATE_DIR)
    set(template_args --template-dir ${ARG_TEMPLATE_DIR})
    file(GLOB template_deps CONFIGURE_DEPENDS ${ARG_TEMPLATE_DIR}/*.mustache)
  endif()

  set(headers "")
  foreach(schema ${ARG_SCHEMAS})
    get_filename_component(schema_abs ${schema} ABSOLUTE)
    get_filename_component(stem ${schema} NAME_WE)
    set(header ${ARG_OUTPUT_DIR}/${stem}.h)
    # tcgen rewrites the header only when its content changes; the stamp records that the step
    # ran, so an edit that leaves the header unchanged neither reruns tcgen nor recompiles users.
    set(stamp ${ARG_OUTPUT_DIR}/${stem}.h.stamp)
    add_custom_command(
      OUTPUT ${stamp}
      BYPRODUCTS ${header}
      COMMAND ${tcgen_exe} ${schema} -o ${ARG_OUTPUT_DIR} --depfile ${stamp}.d
              --depfile-target ${stamp} ${template_args}
      COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
      DEPENDS ${tcgen_dep} ${schema_abs} ${template_deps}
      DEPFILE ${stamp}.d
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      COMMENT "tcgen ${schema}"
      VERBATIM)
    list(APPEND headers ${header} ${stamp})
  endforeach()
  target_sources(${ARG_TARGET} PRIVATE ${headers})
  target_include_directories(${ARG_TARGET} PUBLIC $<BUILD_INTERFACE:${ARG_OUTPUT_DIR}>)
endfunction()
