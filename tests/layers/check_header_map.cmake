# The map of tensordict.h, checked: the public part of class TensorDict (the header and the member
# files under tensordict/members/ that its body includes) is in sections, each under a banner
# naming the one source file that defines its members,
#   // ---- <title> (<folder>/<file>.cpp) ----
# and every public member defined out of line is defined in its section's file (by its own
# `TensorDict::name(` or by a macro of that file); overloads defined in several files sit in a
# section of each. Members defined in the header itself may sit in any section. Torch-free; run as
#   cmake [-DROOT=<tree holding runtime/>] [-DMIN_MEMBERS=<n>] -P check_header_map.cmake
# (MIN_MEMBERS, 100 by default, guards the parse: fewer public members read is an error).
# Each problem is reported as `<file>:<line>: <problem>`, and the script then fails.
# docs/runtime.md ("Source layout") describes the header; runtime/cmake/HeaderDeclarations.cmake
# reads its declarations.
cmake_minimum_required(VERSION 3.18)

if(NOT DEFINED ROOT)
  set(ROOT "${CMAKE_CURRENT_LIST_DIR}/../..")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
set(header "${ROOT}/runtime/include/tensordict/tensordict.h")
set(src "${ROOT}/runtime/src")

set(problems 0)
macro(tc_report where message)
  message("runtime/include/tensordict/${where}: ${message}")
  math(EXPR problems "${problems} + 1")
endmacro()

# ---- where each member is defined: `defined_in_<name>`, the files (relative to runtime/src/) ----
file(GLOB_RECURSE sources LIST_DIRECTORIES false RELATIVE "${src}" "${src}/*.cpp")
foreach(rel IN LISTS sources)
  file(READ "${src}/${rel}" text)
  # Definitions start a line (declarations and calls are indented or end in ';').
  string(REGEX MATCHALL "\n([A-Za-z][^\n;{]*[ &*])?TensorDict::(operator[^ (\n]+|[a-z_A-Z0-9]+)\\("
         heads "\n${text}")
  set(names "")
  foreach(head IN LISTS heads)
    string(REGEX MATCH "TensorDict::(operator[^ (\n]+|[a-z_A-Z0-9]+)\\($" _ "${head}")
    list(APPEND names "${CMAKE_MATCH_1}")
  endforeach()
  # Macros that define members (`#define TC_X(NAME) ... TensorDict::NAME(`), and their uses.
  string(REGEX MATCHALL "#define ([A-Z_0-9]+)\\([^)]*\\)[^\n]*\\\\\n([^\n]*\\\\\n)*[^\n]*"
         macros "${text}")
  foreach(macro IN LISTS macros)
    if(macro MATCHES "TensorDict::" AND macro MATCHES "^#define ([A-Z_0-9]+)\\(")
      string(REGEX MATCHALL "\n${CMAKE_MATCH_1}\\([a-z_0-9]+" uses "\n${text}")
      foreach(use IN LISTS uses)
        string(REGEX REPLACE ".*\\(" "" name "${use}")
        list(APPEND names "${name}")
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  foreach(name IN LISTS names)
    list(APPEND "defined_in_${name}" "${rel}")
  endforeach()
endforeach()

# ---- the class's public members, section by section ----------------------------------------
include("${CMAKE_CURRENT_LIST_DIR}/../../runtime/cmake/HeaderDeclarations.cmake")
tc_public_declarations("${header}" TensorDict member)
set(n_members ${member_count})
set(banners "")
math(EXPR last "${member_count} - 1")
foreach(i RANGE ${last})
  tc_parse_declaration("${member_${i}}" d)
  set(name "${d_name}")
  set(statement_where "${member_${i}_where}")
  set(banner "${member_${i}_banner}")
  set(section "")
  set(section_file "")
  if(NOT banner STREQUAL "" AND NOT member_${i}_banner_where IN_LIST banners)
    list(APPEND banners ${member_${i}_banner_where})
    if(NOT banner MATCHES "^  // ---- (.+) \\(([a-z_]+/[a-z_0-9]+\\.cpp)\\) -*$")
      tc_report(${member_${i}_banner_where} "a section banner names its one defining file: // ---- <title> (<folder>/<file>.cpp) ----")
    elseif(NOT EXISTS "${src}/${CMAKE_MATCH_2}")
      tc_report(${member_${i}_banner_where} "section '${CMAKE_MATCH_1}' names ${CMAKE_MATCH_2}, not a file of runtime/src/")
    endif()
  endif()
  if(banner MATCHES "^  // ---- (.+) \\(([a-z_]+/[a-z_0-9]+\\.cpp)\\) -*$")
    set(section "${CMAKE_MATCH_1}")
    set(section_file "${CMAKE_MATCH_2}")
  endif()
  if(member_${i}_inline)  # defined in the class
    continue()
  endif()
  set(where "${defined_in_${name}}")
  if(NOT where)
    continue()  # inline after the class, or a template defined in the header
  endif()
  if(banner STREQUAL "")
    tc_report("${statement_where}" "${name} is declared before the first section banner")
    continue()
  endif()
  if(section_file STREQUAL "")
    continue()  # its banner is reported above
  endif()
  if(NOT section_file IN_LIST where)
    string(REPLACE ";" ", " where "${where}")
    tc_report("${statement_where}"
              "${name} is in section '${section}' (${section_file}) but defined in ${where}")
  endif()
  list(APPEND declared_names "${name}")
  list(APPEND "declared_in_${name}" "${section_file}")
  set("first_where_of_${name}" "${statement_where}")
endforeach()
list(LENGTH banners n_sections)

# A name defined in several files (overloads) is declared in a section of each.
list(REMOVE_DUPLICATES declared_names)
foreach(name IN LISTS declared_names)
  foreach(file IN LISTS "defined_in_${name}")
    if(NOT file IN_LIST "declared_in_${name}")
      tc_report("${first_where_of_${name}}"
                "${name} is also defined in ${file}, which no section declaring it names")
    endif()
  endforeach()
endforeach()

if(NOT DEFINED MIN_MEMBERS)
  set(MIN_MEMBERS 100)
endif()
if(n_members LESS MIN_MEMBERS)
  message(FATAL_ERROR "header map: read only ${n_members} members of TensorDict: the parse is off")
endif()
if(problems GREATER 0)
  message(FATAL_ERROR "header map check failed: ${problems} problem(s)")
endif()
message(STATUS "header map: ${n_members} public members of TensorDict in ${n_sections} sections, "
               "each defined in its section's file")
