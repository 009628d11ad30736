// meta.json files: Python stdlib json spelling on write (tensordict/json.h), any JSON on read;
// the `_type` strings that need more than a comparison.
#include "tensordict/json.h"
#include "memmap/internal.h"

namespace tensordict::memmap {

Json read_meta(const std::string& dir) {
  const std::string path = detail::join(dir, "meta.json");
  Json meta = parse_json(detail::read_text(path), "'" + path + "'");
  if (!meta.is_object()) throw FormatError("'" + path + "' is not a JSON object");
  return meta;
}

int64_t parse_schema_version(const std::string& text, const std::string& where) {
  const Json file = parse_json(text, where);
  const auto version = file.is_object() ? file.find("version") : file.end();
  if (!file.is_object() || version == file.end() || !version->is_number_integer() ||
      version->get<int64_t>() < 1) {
    throw FormatError(where + ": expected {\"version\": <a positive integer>}");
  }
  return version->get<int64_t>();
}

bool is_metadata_type(std::string_view type) {
  constexpr std::string_view typed = "<class 'tensordict.tensorclass.MetaData[", close = "]'>";
  return type == kMetaDataType ||
         (type.size() > typed.size() + close.size() && type.substr(0, typed.size()) == typed &&
          type.substr(type.size() - close.size()) == close);
}

void write_meta(const std::string& dir, const Json& meta, bool compact) {
  JsonStyle style;
  style.compact = compact;
  detail::write_text(detail::join(dir, "meta.json"), dumps_python(meta, style));
}

}  // namespace tensordict::memmap
