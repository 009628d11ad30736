# tensorclass_generate(TARGET <target> SCHEMAS <files...> [OUTPUT_DIR <dir>] [PYTHON_OUT <dir>]
#                      [PYTHON_BASE TensorClass|TypedTensorDict]
#                      [INCLUDE_DIRS <dirs...>] [TEMPLATE_DIR <dir>] [COMPILE_COMMANDS <dir>])
#
# SCHEMAS are YAML files (.yaml) or annotated C++ headers (.h, .hpp; tensordict/annotate.h).
# Generates one header per schema into OUTPUT_DIR (default
# ${CMAKE_CURRENT_BINARY_DIR}/tensorclass_generated), named as tcgen names it (`a.b.yaml` ->
# `a.b.h`), adds it to <target>'s sources and include path, and links <target> to the runtime.
# Schemas may `include:` the shipped schemas (history.yaml, reward.yaml) and files in
# INCLUDE_DIRS; the shipped generated headers are on the include path, and the headers of other
# included schemas are generated beside the listed ones without being listed (as
# protobuf_generate follows imports). tcgen reruns only when a
# schema, an included schema (via the depfile), a template or tcgen itself changes, and rewrites a
# header only when its content changes. When it does, the <target> sources added before the call
# recompile in that same build, whichever generated header they include (with Make and Ninja).
#
# PYTHON_OUT also writes the Python TensorClass modules of the same classes there (tcgen --lang
# python: `a/b/c.py` for a class named `a.b.c.Name`), rebuilt with the headers; included schemas'
# modules too, except the shipped ones (TorchRL's classes are TorchRL's). PYTHON_BASE
# TypedTensorDict writes them as TypedTensorDict subclasses (tcgen --python-base).
#
# tcgen is the `tcgen` target in the TensorClass build tree, or the installed
# TensorClass::tcgen (found through find_package(TensorClass)).
# One tcgen run of a build: COMMAND (tcgen and its arguments) gets the depfile options; STAMP
# records that the step ran, so an edit that leaves the outputs unchanged neither reruns tcgen nor
# recompiles their users.
function(_tensorclass_tcgen_step)
  cmake_parse_arguments(STEP "" "STAMP;COMMENT" "COMMAND;BYPRODUCTS;DEPENDS" ${ARGN})
  # CMP0116 NEW: CMake rewrites the depfile's paths for Ninja, which otherwise sees a target
  # named by an absolute path as never built and reruns tcgen on every build (for projects
  # whose cmake_minimum_required predates 3.20).
  if(POLICY CMP0116)
    cmake_policy(PUSH)
    cmake_policy(SET CMP0116 NEW)
  endif()
  add_custom_command(
    OUTPUT ${STEP_STAMP}
    BYPRODUCTS ${STEP_BYPRODUCTS}
    COMMAND ${STEP_COMMAND} --depfile ${STEP_STAMP}.d --depfile-target ${STEP_STAMP}
    COMMAND ${CMAKE_COMMAND} -E touch ${STEP_STAMP}
    DEPENDS ${STEP_DEPENDS}
    DEPFILE ${STEP_STAMP}.d
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    COMMENT "${STEP_COMMENT}"
    COMMAND_EXPAND_LISTS
    VERBATIM)
  if(POLICY CMP0116)
    cmake_policy(POP)
  endif()
endfunction()

function(tensorclass_generate)
  cmake_parse_arguments(ARG "" "TARGET;OUTPUT_DIR;PYTHON_OUT;PYTHON_BASE;TEMPLATE_DIR;COMPILE_COMMANDS"
                        "SCHEMAS;INCLUDE_DIRS" ${ARGN})
  set(python_base "")
  if(ARG_PYTHON_BASE)
    set(python_base --python-base ${ARG_PYTHON_BASE})
  endif()
  if(NOT ARG_TARGET OR NOT ARG_SCHEMAS)
    message(FATAL_ERROR "tensorclass_generate: TARGET and SCHEMAS are required")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/tensorclass_generated)
  endif()
  if(TARGET tcgen)
    set(tcgen_exe $<TARGET_FILE:tcgen>)
    set(tcgen_dep tcgen)
    set(runtime tensordict)
  else()
    set(tcgen_exe $<TARGET_FILE:TensorClass::tcgen>)
    set(tcgen_dep TensorClass::tcgen)
    set(runtime TensorClass::runtime)
  endif()
  set(extra_args "")
  set(template_deps "")
  if(ARG_TEMPLATE_DIR)
    list(APPEND extra_args --template-dir ${ARG_TEMPLATE_DIR})
    file(GLOB template_deps CONFIGURE_DEPENDS ${ARG_TEMPLATE_DIR}/*.mustache)
  endif()
  foreach(dir ${ARG_INCLUDE_DIRS})
    get_filename_component(dir_abs ${dir} ABSOLUTE)
    list(APPEND extra_args -I ${dir_abs})
  endforeach()
  # Included schemas get their headers too (only the package's own ship prebuilt).
  list(APPEND extra_args --with-includes --prebuilt-dir ${TensorClass_SCHEMA_DIR})

  # Schemas written in C++ (annotated headers) are parsed by tcgen with libclang, with the
  # target's include directories and definitions (its usage requirements included), so the
  # headers they include resolve as in the target's own build.
  set(incs "$<TARGET_PROPERTY:${ARG_TARGET},INCLUDE_DIRECTORIES>")
  set(defs "$<TARGET_PROPERTY:${ARG_TARGET},COMPILE_DEFINITIONS>")
  set(clang_args "$<$<BOOL:${incs}>:--clang-arg=-I$<JOIN:${incs},$<SEMICOLON>--clang-arg=-I>>"
                 "$<$<BOOL:${defs}>:--clang-arg=-D$<JOIN:${defs},$<SEMICOLON>--clang-arg=-D>>")
  if(ARG_COMPILE_COMMANDS)  # a directory with compile_commands.json: its first command's flags too
    get_filename_component(db_dir ${ARG_COMPILE_COMMANDS} ABSOLUTE)
    list(APPEND clang_args -p ${db_dir})
  endif()

  # Sources that include a header tcgen wrote for an included schema (not listed, so no build
  # output Ninja knows of) recompile in the same build as its change: they depend on a file tcgen
  # rewrites whenever any header of the step changes. The target's sources added before this call.
  get_target_property(sources ${ARG_TARGET} SOURCES)
  list(FILTER sources EXCLUDE REGEX "\\$<")  # generator expressions name no file yet
  set(headers "")
  foreach(schema ${ARG_SCHEMAS})
    set(schema_args "")
    if(schema MATCHES "\\.(h|hh|hpp|hxx)$")
      set(schema_args ${clang_args})
    endif()
    get_filename_component(schema_abs ${schema} ABSOLUTE)
    get_filename_component(stem ${schema} NAME_WLE)
    set(header ${ARG_OUTPUT_DIR}/${stem}.h)
    set(stamp ${ARG_OUTPUT_DIR}/${stem}.h.stamp)
    set(changed ${ARG_OUTPUT_DIR}/${stem}.h.changed)
    _tensorclass_tcgen_step(STAMP ${stamp} BYPRODUCTS ${header} ${changed} COMMENT "tcgen ${schema}"
      COMMAND ${tcgen_exe} ${schema} -o ${ARG_OUTPUT_DIR} --changed-stamp ${changed}
              ${extra_args} ${schema_args}
      DEPENDS ${tcgen_dep} ${schema_abs} ${template_deps})
    list(APPEND headers ${header} ${stamp})
    if(sources)
      set_property(SOURCE ${sources} TARGET_DIRECTORY ${ARG_TARGET} APPEND
                   PROPERTY OBJECT_DEPENDS ${changed})
    endif()
    if(ARG_PYTHON_OUT)
      set(py_stamp ${ARG_PYTHON_OUT}/.${stem}.py.stamp)
      _tensorclass_tcgen_step(STAMP ${py_stamp} COMMENT "tcgen --lang python ${schema}"
        COMMAND ${tcgen_exe} ${schema} --lang python ${python_base} -o ${ARG_PYTHON_OUT}
                ${extra_args} ${schema_args}
        DEPENDS ${tcgen_dep} ${schema_abs} ${template_deps})
      list(APPEND headers ${py_stamp})
    endif()
  endforeach()
  target_sources(${ARG_TARGET} PRIVATE ${headers})
  target_include_directories(${ARG_TARGET} PUBLIC $<BUILD_INTERFACE:${ARG_OUTPUT_DIR}>)
  # Headers of included shipped schemas (reward.h, ...) come from the package.
  target_include_directories(${ARG_TARGET} SYSTEM PUBLIC ${TensorClass_GENERATED_INCLUDE_DIR})
  target_link_libraries(${ARG_TARGET} PUBLIC ${runtime})
endfunction()
