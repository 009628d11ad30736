# cmake -DOUT=<file.cpp> -DTEMPLATE_DIR=<dir> -P embed_templates.cmake
# Writes builtin_templates() with the text of every <dir>/*.mustache as a raw string literal.
file(GLOB templates ${TEMPLATE_DIR}/*.mustache)
list(SORT templates)
set(body "")
foreach(path ${templates})
  get_filename_component(name ${path} NAME_WE)
  file(READ ${path} text)
  string(APPEND body "      {\"${name}\", R\"tcgen_template(${text})tcgen_template\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from templates/*.mustache by embed_templates.cmake.
#include \"emit/templates.h\"

namespace tcgen {

const Templates& builtin_templates() {
  static const Templates templates = {
${body}  };
  return templates;
}

}  // namespace tcgen
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
