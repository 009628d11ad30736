// TorchRL's ContentBase parts: JSON objects <-> the ContentBase TensorDict (batch [k]) a
// message's content holds, and the checks that name a malformed part's index and field.
#include <algorithm>
#include <array>

#include "history.h"
#include "tensorclass/llm/conversation.h"

namespace tensorclass::llm {
namespace {

using tensordict::TensorDict;
using tensordict::TypeError;

// The fields in schema order, with the JSON kind each allows besides null.
struct PartField {
  const char* name;
  bool (Json::*is_kind)() const noexcept;
  const char* expected;
};
constexpr std::array<PartField, 9> kFields = {{
    {"type", &Json::is_string, "a string"},
    {"text", &Json::is_string, "a string"},
    {"url", &Json::is_string, "a string"},
    {"data", &Json::is_string, "a string"},
    {"mime_type", &Json::is_string, "a string"},
    {"name", &Json::is_string, "a string"},
    {"size", &Json::is_number_integer, "an integer"},
    {"function_name", &Json::is_string, "a string"},
    {"function_args", &Json::is_object, "a JSON object"},
}};

void check_part(const Json& part, size_t index) {
  const std::string where = "part " + std::to_string(index) + ": ";
  if (!part.is_object())
    throw TypeError(where + "a ContentBase part must be a JSON object, got " + part.dump());
  for (const auto& [key, value] : part.items()) {
    auto field = std::find_if(kFields.begin(), kFields.end(),
                              [&](const PartField& f) { return key == f.name; });
    if (field == kFields.end()) {
      throw TypeError(where + "unknown ContentBase field '" + key +
                      "' (known: type, text, url, data, mime_type, name, size, function_name, "
                      "function_args)");
    }
    if (!value.is_null() && !(value.*(field->is_kind))()) {
      throw TypeError(where + "field '" + key + "' must be " + field->expected + ", got " +
                      value.type_name() + " " + value.dump());
    }
  }
  if (!part.contains("type") || part["type"].is_null())
    throw TypeError(where + "field 'type' is missing");
}

}  // namespace

void check_content_parts(const Json& parts) {
  if (!parts.is_array() || parts.empty()) {
    throw TypeError("ContentBase parts must be a non-empty list, got " + parts.dump());
  }
  for (size_t i = 0; i < parts.size(); ++i) check_part(parts[i], i);
}

TensorDict content_parts_tensordict(const Json& parts) {
  check_content_parts(parts);
  std::array<Json, kFields.size()> columns;
  for (size_t f = 0; f < kFields.size(); ++f) {
    Json column = Json::array();
    bool any = false;
    for (const auto& part : parts) {
      column.push_back(part.value(kFields[f].name, Json()));
      any = any || !column.back().is_null();
    }
    // A field no part has stays None, as TorchRL's lazy stack of parts shows it.
    if (any) columns[f] = std::move(column);
  }
  torchrl::llm::ContentBase::Args args;
  args.field_type = std::move(columns[0]);
  args.text = std::move(columns[1]);
  args.url = std::move(columns[2]);
  args.data = std::move(columns[3]);
  args.mime_type = std::move(columns[4]);
  args.name = std::move(columns[5]);
  args.field_size = std::move(columns[6]);
  args.function_name = std::move(columns[7]);
  args.function_args = std::move(columns[8]);
  const auto k = static_cast<int64_t>(parts.size());
  return torchrl::llm::ContentBase(std::move(args), {k})._tensordict();
}

Json content_parts_json(const TensorDict& parts) {
  if (parts.ndim() != 1) {
    throw tensordict::ShapeError(
        "a message's ContentBase parts have one batch dim, got batch_size " +
        tensordict::shape_str(parts.batch_size()));
  }
  Json out = Json::array();
  for (int64_t k = 0; k < parts.batch_size()[0]; ++k) out.push_back(Json::object());
  for (const auto& field : kFields) {
    const Json column = message_column(parts, field.name, parts.batch_size()[0]);
    for (size_t k = 0; k < out.size(); ++k) {
      if (!column[k].is_null()) out[k][field.name] = column[k];
    }
  }
  return out;
}

}  // namespace tensorclass::llm
