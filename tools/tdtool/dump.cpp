// tdtool dump --json: values as JSON, for scripts and diffs.
#include <ATen/ATen.h>

#include <ostream>

#include "commands.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

namespace tdtool {
namespace {

using tensordict::Json;
using tensordict::NestedKey;
using tensordict::TensorDict;
using tensordict::Value;

Json td_to_json(const TensorDict& td);

// `json` with "names" after "batch_size" when a dim of `td` has a name.
Json with_names(const TensorDict& td, Json json) {
  Json names = names_json(td);
  if (names.is_null()) return json;
  Json out = Json::object();
  for (auto& [key, value] : json.items()) {
    out[key] = std::move(value);
    if (key == "batch_size") out["names"] = names;
  }
  return out;
}

Json value_to_json(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Tensor:
      return tensor_to_json(value.tensor());
    case Value::Kind::TensorDict:
      return td_to_json(value.tensordict());
    case Value::Kind::NonTensorData:
      return Json{{"non_tensor", value.non_tensor_data().data}};
    case Value::Kind::NonTensorStack:
      return Json{{"non_tensor", value.non_tensor_stack().tolist()}};
  }
  return {};
}

Json td_to_json(const TensorDict& td) {
  if (td.is_lazy_stack()) {  // its elements, each with its own keys and batch size
    Json elements = Json::array();
    for (const auto& element : td.tensordicts()) elements.push_back(td_to_json(element));
    return with_names(td, Json{{"batch_size", td.batch_size()},
                               {"stack_dim", td.stack_dim()},
                               {"tensordicts", std::move(elements)}});
  }
  Json entries = Json::object();
  for (size_t i = 0; i < td.size(); ++i) {
    try {
      entries[td.key_at(i)] = value_to_json(td.value_at(i));
    } catch (const tensordict::FormatError& e) {
      if (!td.value_at(i).is_tensor()) throw;
      throw tensordict::FormatError("key '" + td.key_at(i) + "': " + e.what());
    }
  }
  return with_names(td, Json{{"batch_size", td.batch_size()}, {"entries", std::move(entries)}});
}

// "a.b" names key ("a", "b"), unless "a.b" is itself a top-level key (Python allows dots in keys).
NestedKey parse_key(const TensorDict& td, const std::string& text) {
  if (td.contains(text)) return text;
  const NestedKey key = NestedKey::split(text);
  if (!td.contains(key)) throw tensordict::KeyError("no key '" + text + "'");
  return key;
}

// The selected entries, with the nested TensorDicts leading to them.
Json select_to_json(const TensorDict& td, const std::vector<std::string>& texts) {
  Json out = Json{{"batch_size", td.batch_size()}, {"entries", Json::object()}};
  for (const auto& text : texts) {
    const NestedKey key = parse_key(td, text);
    Json* node = &out;
    for (size_t i = 0; i + 1 < key.size(); ++i) {
      Json& entries = (*node)["entries"];
      if (!entries.contains(key[i])) {
        const TensorDict sub = td.get_tensordict(NestedKey(std::vector<std::string>(
            key.begin(), key.begin() + static_cast<std::ptrdiff_t>(i) + 1)));
        entries[key[i]] = Json{{"batch_size", sub.batch_size()}, {"entries", Json::object()}};
      }
      node = &entries[key[i]];
    }
    (*node)["entries"][key.back()] = value_to_json(td.get_value(key));
  }
  return out;
}

// `node` is a tensorclass: its class, and (in a whole dump) its non-tensor fields among its
// entries, as `tdtool ls` lists them (None fields as null).
void add_class(Json& node, const tensordict::memmap::ClassInfo& info, bool with_fields) {
  node["class"] = info.type;
  if (!with_fields || !node.contains("entries")) return;
  for (const auto& [key, value] : info.fields.items()) node["entries"][key] = value;
}

// add_class for the node at `key` (a path of entries and lazy-stack element indices), where the
// dump holds that node.
void mark_class(Json& json, const NestedKey& key, const tensordict::memmap::ClassInfo& info,
                bool with_fields) {
  Json* node = &json;
  for (const auto& part : key) {
    if (node->contains("entries") && (*node)["entries"].contains(part)) {
      node = &(*node)["entries"][part];
    } else if (node->contains("tensordicts") && !part.empty() &&
               part.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(part) < (*node)["tensordicts"].size()) {
      node = &(*node)["tensordicts"][std::stoul(part)];
    } else {
      return;  // not selected
    }
  }
  add_class(*node, info, with_fields);
}

}  // namespace

int run_dump(const std::string& dir, const std::vector<std::string>& keys, std::ostream& out) {
  const auto loaded = load_tree(dir);
  if (!loaded.value.is_tensordict()) {
    out << tensordict::dumps_python(value_to_json(loaded.value)) << "\n";
    return 0;
  }
  const TensorDict& td = loaded.value.tensordict();
  Json json = keys.empty() ? td_to_json(td) : select_to_json(td, keys);
  const bool whole = keys.empty();
  if (loaded.class_info) add_class(json, *loaded.class_info, whole);
  for (const auto& [key, info] : loaded.nested_classes) mark_class(json, key, info, whole);
  out << tensordict::dumps_python(json) << "\n";
  return 0;
}

}  // namespace tdtool
