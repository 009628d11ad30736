// meta.json files: Python stdlib json spelling on write (tensordict/json.h), any JSON on read.
#include "tensordict/json.h"
#include "memmap/internal.h"

namespace tensordict::memmap {

Json read_meta(const std::string& dir) {
  const std::string path = detail::join(dir, "meta.json");
  Json meta = parse_json(detail::read_text(path), "'" + path + "'");
  if (!meta.is_object()) throw FormatError("'" + path + "' is not a JSON object");
  return meta;
}

void write_meta(const std::string& dir, const Json& meta, bool compact) {
  JsonStyle style;
  style.compact = compact;
  detail::write_text(detail::join(dir, "meta.json"), dumps_python(meta, style));
}

}  // namespace tensordict::memmap
