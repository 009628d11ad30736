# The include layers of the runtime and of tcgen, checked: every #include of runtime/src/** and
# runtime/internal/** (or, with -DTREE=generator, of generator/**) names its own layer or a lower
# one. Torch-free; run as
#   cmake [-DROOT=<tree holding runtime/>] [-DTREE=runtime|generator] -P check_layers.cmake
# (ROOT defaults to this repository, TREE to runtime). Each upward include is reported as
#   <file>:<line>: upward include <from> -> <to>: "<header>"
# and the script then fails. docs/runtime.md ("Source layout") describes the layers.
cmake_minimum_required(VERSION 3.18)

# The layers, lowest first: the folders of runtime/src/. This list is the one statement of the
# order; a file includes only its own layer and those before it.
set(TC_LAYERS core lazy ops memmap tensorclass)
# tcgen's stages, in the order a schema passes through them (docs/architecture.md).
set(TC_STAGES model frontend check emit driver)

# Headers outside runtime/src/ that belong to a layer above core, as `<include path>=<layer>`:
# runtime/internal/'s (every one must be listed) and the public headers of one upper layer's API.
# Every other public header is the whole runtime's, and any layer may include it.
set(TC_LAYERED_HEADERS
    tensordict/lazy_stack.h=lazy
    tensordict/module.h=ops
    tensordict/archive.h=memmap
    tensordict/internal.h=memmap  # runtime/internal/: the consolidated metadata and the save hook
    tensordict/zip_files.h=memmap  # runtime/internal/: the files of a zip (AOTInductor packages)
    tensordict/memmap.h=memmap
    tensordict/safetensors.h=memmap
    tensordict/safetensors_format.h=memmap  # runtime/internal/: the header, torch-free (tcgen too)
    tensordict/class_spec.h=tensorclass
    tensordict/detail/tensorclass_support.h=tensorclass
    tensordict/state_dict.h=tensorclass
    tensordict/tensorclass.h=tensorclass
    tensordict/tensorclass_future.h=tensorclass)

if(NOT DEFINED ROOT)
  set(ROOT "${CMAKE_CURRENT_LIST_DIR}/../..")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
set(src "${ROOT}/runtime/src")
set(internal "${ROOT}/runtime/internal")
if(TREE STREQUAL "generator")  # no internal or layered public headers there
  set(TC_LAYERS ${TC_STAGES})
  set(TC_LAYERED_HEADERS "")
  set(src "${ROOT}/generator")
  set(internal "")
elseif(DEFINED TREE AND NOT TREE STREQUAL "runtime")
  message(FATAL_ERROR "layer check: TREE is runtime or generator, not '${TREE}'")
endif()

# The layer of a header under runtime/internal/ or runtime/include/ (`rel`, its include path), or
# "" when it has none.
function(tc_header_layer rel out)
  set(layer "")
  foreach(entry IN LISTS TC_LAYERED_HEADERS)
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 header)
    if(header STREQUAL rel)
      list(GET pair 1 layer)
    endif()
  endforeach()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# The layer of an included file, `inc` as written in a file of `dir`: sets `<out>` to it ("" for
# none) and `<out>_in_src` to whether the file is under runtime/src/.
function(tc_include_layer dir inc out)
  set(layer "")
  set(in_src FALSE)
  get_filename_component(path "${inc}" ABSOLUTE BASE_DIR "${dir}")
  if(EXISTS "${path}")  # relative to its includer
    file(RELATIVE_PATH rel "${src}" "${path}")
    file(RELATIVE_PATH in_internal "${internal}" "${path}")
    file(RELATIVE_PATH in_include "${ROOT}/runtime/include" "${path}")
  else()  # relative to the include directories (runtime/src, runtime/internal, runtime/include)
    set(rel "${inc}")
    set(in_internal "${inc}")
    set(in_include "${inc}")
  endif()
  string(REGEX REPLACE "/.*" "" folder "${rel}")
  if(rel MATCHES "/" AND folder IN_LIST TC_LAYERS)
    set(layer "${folder}")
    set(in_src TRUE)
  else()
    tc_header_layer("${in_internal}" layer)
    if(layer STREQUAL "")
      tc_header_layer("${in_include}" layer)
    endif()
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
  set(${out}_in_src ${in_src} PARENT_SCOPE)
endfunction()

set(problems 0)
set(checked 0)
function(tc_report file line message)
  file(RELATIVE_PATH rel "${ROOT}" "${file}")
  message("${rel}:${line}: ${message}")
  math(EXPR n "${problems} + 1")
  set(problems ${n} PARENT_SCOPE)
endfunction()

# Checks every #include of `file`, which belongs to `layer` (in runtime/internal/ when
# `from_internal`).
function(tc_check_file file layer from_internal)
  list(FIND TC_LAYERS "${layer}" rank)
  get_filename_component(dir "${file}" DIRECTORY)
  file(READ "${file}" content)
  string(REGEX MATCHALL "(^|\n)[ \t]*#[ \t]*include[ \t]*[<\"][^\n]*" lines "${content}")
  set(rest "\n${content}")
  set(line_no 0)
  foreach(text IN LISTS lines)
    # The line number: the newlines before this line, found after the previous one.
    string(REGEX REPLACE "^\n" "" text "${text}")
    string(FIND "${rest}" "\n${text}" at)
    string(SUBSTRING "${rest}" 0 ${at} before)
    string(REGEX REPLACE "[^\n]+" "" newlines "${before}")
    string(LENGTH "${newlines}" skipped)
    math(EXPR line_no "${line_no} + ${skipped} + 1")
    math(EXPR at "${at} + 1")
    string(SUBSTRING "${rest}" ${at} -1 rest)

    string(REGEX MATCH "include[ \t]*[<\"]([^\">]*)[\">]" _ "${text}")
    set(inc "${CMAKE_MATCH_1}")
    math(EXPR checked "${checked} + 1")
    tc_include_layer("${dir}" "${inc}" to)
    if(to STREQUAL "")
      continue()
    endif()
    list(FIND TC_LAYERS "${to}" to_rank)
    if(from_internal AND to_in_src)
      # Other libraries include runtime/internal/ and see no runtime/src/.
      tc_report("${file}" ${line_no} "runtime/internal/ includes runtime/src/: \"${inc}\"")
    elseif(to_rank GREATER rank)
      tc_report("${file}" ${line_no} "upward include ${layer} -> ${to}: \"${inc}\"")
    endif()
  endforeach()
  set(problems ${problems} PARENT_SCOPE)
  set(checked ${checked} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources LIST_DIRECTORIES false "${src}/*.h" "${src}/*.cpp")
if(NOT sources)
  message(FATAL_ERROR "layer check: no sources under ${src}")
endif()
foreach(file IN LISTS sources)
  file(RELATIVE_PATH rel "${src}" "${file}")
  string(REGEX REPLACE "/.*" "" folder "${rel}")
  if(NOT rel MATCHES "/" OR NOT folder IN_LIST TC_LAYERS)
    tc_report("${file}" 1 "not in a layer's folder (${TC_LAYERS}; tests/layers/check_layers.cmake)")
    continue()
  endif()
  tc_check_file("${file}" "${folder}" FALSE)
endforeach()

set(headers "")
if(internal)
  file(GLOB_RECURSE headers LIST_DIRECTORIES false "${internal}/*")
endif()
foreach(file IN LISTS headers)
  file(RELATIVE_PATH rel "${internal}" "${file}")
  tc_header_layer("${rel}" layer)
  if(layer STREQUAL "")
    tc_report("${file}" 1 "no layer: list it in TC_LAYERED_HEADERS (tests/layers/check_layers.cmake)")
    continue()
  endif()
  tc_check_file("${file}" "${layer}" TRUE)
endforeach()

list(LENGTH sources n_sources)
list(LENGTH headers n_headers)
math(EXPR n_files "${n_sources} + ${n_headers}")
string(REPLACE ";" " < " order "${TC_LAYERS}")
if(problems GREATER 0)
  message(FATAL_ERROR "layer check failed: ${problems} problem(s) in ${n_files} files "
                      "(layers ${order})")
endif()
message(STATUS "layers ${order}: ${n_files} files, ${checked} includes, none upward")
