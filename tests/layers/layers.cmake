# The layers of the runtime and of tcgen: the one statement of their order, read by
# check_layers.cmake (includes), check_links.cmake (calls) and tests/layers/CMakeLists.txt.
# A file includes, and its objects call, only its own layer and those before it.

# The runtime's layers, lowest first: the folders of runtime/src/, each built as an object library
# of its own (runtime/CMakeLists.txt). Folders joined by "+" are one layer: the dense and the lazy
# forms sit side by side and call each other, as Python's _td.py and _lazy.py do.
set(TC_LAYERS core lazy+ops memmap tensorclass)
# tcgen's stages, in the order a schema passes through them (docs/architecture.md).
set(TC_STAGES model frontend check emit driver)

# Headers outside runtime/src/ that belong to a layer above core, as `<include path>=<folder>`:
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
    tensordict/class_registry.h=tensorclass
    tensordict/class_spec.h=tensorclass
    tensordict/tensor_default.h=tensorclass  # runtime/internal/: torch-free (tcgen too)
    tensordict/detail/tensorclass_support.h=tensorclass
    tensordict/state_dict.h=tensorclass
    tensordict/tensorclass.h=tensorclass
    tensordict/tensorclass_future.h=tensorclass)

# The folders of `layers` (a list like TC_LAYERS), lowest first.
function(tc_layer_folders layers out)
  string(REPLACE "+" ";" folders "${layers}")
  set(${out} ${folders} PARENT_SCOPE)
endfunction()

# The rank of `folder` in `layers` (0 for the lowest), or -1 when it is in none.
function(tc_layer_rank layers folder out)
  set(rank 0)
  foreach(layer IN LISTS layers)
    string(REPLACE "+" ";" folders "${layer}")
    if(folder IN_LIST folders)
      set(${out} ${rank} PARENT_SCOPE)
      return()
    endif()
    math(EXPR rank "${rank} + 1")
  endforeach()
  set(${out} -1 PARENT_SCOPE)
endfunction()
