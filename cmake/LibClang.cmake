# libclang (Debian's libclang-dev, LLVM 14): TC_LIBCLANG_LIBRARY, TC_LIBCLANG_INCLUDE_DIR and
# TC_CLANG_RESOURCE_DIR (libclang does not find its own builtin headers, such as stddef.h, unless
# given the matching -resource-dir). TC_LIBCLANG_FOUND is false when it is not installed.
find_library(TC_LIBCLANG_LIBRARY NAMES clang clang-14 PATHS /usr/lib/llvm-14/lib)
find_path(TC_LIBCLANG_INCLUDE_DIR clang-c/Index.h PATHS /usr/lib/llvm-14/include)
set(TC_LIBCLANG_FOUND FALSE)
if(TC_LIBCLANG_LIBRARY AND TC_LIBCLANG_INCLUDE_DIR)
  get_filename_component(_tc_llvm_lib ${TC_LIBCLANG_LIBRARY} DIRECTORY)
  file(GLOB _tc_resource_dirs LIST_DIRECTORIES true ${_tc_llvm_lib}/clang/*)
  list(SORT _tc_resource_dirs)
  list(REVERSE _tc_resource_dirs)
  list(GET _tc_resource_dirs 0 TC_CLANG_RESOURCE_DIR)
  if(TC_CLANG_RESOURCE_DIR)
    set(TC_LIBCLANG_FOUND TRUE)
  endif()
endif()
