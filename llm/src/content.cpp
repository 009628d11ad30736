// TorchRL's ContentBase parts: JSON objects <-> the ContentBase TensorDict (batch [k]) a
// message's content holds, and the checks that name a malformed part's index and field.
#include <algorithm>
#include <array>

#include "history.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/llm/conversation.h"
#include "tensordict/memmap.h"

namespace tensordict::llm {
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
  // A part without a type is kept as TorchRL keeps it (the templates skip it as a text part).
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
  // TorchRL's layout: a lazy stack of 0-D parts, each holding only the fields it sets.
  std::vector<TensorDict> stacked;
  for (const auto& part : parts) {
    torchrl::llm::ContentBase::Args args;
    args.field_type = part.value("type", Json());
    args.text = part.value("text", Json());
    args.url = part.value("url", Json());
    args.data = part.value("data", Json());
    args.mime_type = part.value("mime_type", Json());
    args.name = part.value("name", Json());
    args.field_size = part.value("size", Json());
    args.function_name = part.value("function_name", Json());
    args.function_args = part.value("function_args", Json());
    stacked.push_back(torchrl::llm::ContentBase(std::move(args))._tensordict());
  }
  TensorDict out = tensordict::lazy_stack(stacked, 0);
  // Saved as Python saves it: a ContentBase directory over the lazy stack, whose meta.json lists
  // as None the fields not every part has.
  tensordict::memmap::ClassInfo info{torchrl::llm::ContentBase::spec().python_type, Json::object()};
  for (const auto& field : kFields) {
    const bool everywhere = std::all_of(parts.begin(), parts.end(), [&](const Json& part) {
      return part.contains(field.name) && !part[field.name].is_null();
    });
    if (!everywhere) info.fields[field.name] = nullptr;
  }
  tensordict::memmap::set_class_info(out, std::move(info));
  return out;
}

namespace {

// Appends the `n` parts of a dense 0-D (n = 1) or 1-D ContentBase TensorDict to `out`.
void append_parts(const TensorDict& parts, int64_t n, Json& out) {
  const size_t first = out.size();
  for (int64_t k = 0; k < n; ++k) out.push_back(Json::object());
  for (const auto& field : kFields) {
    const Json column = message_column(parts, field.name, n);
    for (size_t k = 0; k < column.size(); ++k) {
      if (!column[k].is_null()) out[first + k][field.name] = column[k];
    }
  }
}

}  // namespace

Json content_parts_json(const TensorDict& parts) {
  if (parts.ndim() != 1) {
    throw tensordict::ShapeError(
        "a message's ContentBase parts have one batch dim, got batch_size " +
        tensordict::shape_str(parts.batch_size()));
  }
  Json out = Json::array();
  const int64_t k = parts.batch_size()[0];
  if (!parts.is_lazy_stack()) {
    append_parts(parts, k, out);  // a dense ContentBase (e.g. stacked parts)
    return out;
  }
  for (int64_t i = 0; i < k; ++i) append_parts(parts[i], 1, out);
  return out;
}

}  // namespace tensordict::llm
