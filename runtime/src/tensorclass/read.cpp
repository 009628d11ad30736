// Reading tensorclass fields as their C++ types (the generated accessors of str, int, float,
// bool, list and `any` fields), and any stored entry as JSON.
#include <ATen/ATen.h>

#include <algorithm>

#include "tensorclass/internal.h"
#include "tensordict/detail/tensorclass_support.h"

namespace tensordict::detail::tc {

namespace {

// Python's tolist() of a TensorDict, tensors converted: a dict of the entries for batch [], else
// one list level per batch dim (a nested tensorclass, e.g. History's ContentBase parts, reads as
// the dicts of its fields).
Json tensordict_to_json(const TensorDict& td) {
  if (td.batch_size().empty()) {
    Json out = Json::object();
    for (const auto& key : td.keys()) out[key.front()] = to_json(td.get_value(key));
    return out;
  }
  Json out = Json::array();
  for (int64_t i = 0; i < td.batch_size()[0]; ++i) out.push_back(tensordict_to_json(td[i]));
  return out;
}

}  // namespace

Json to_json(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Tensor:
      return tensor_to_json(value.tensor());
    case Value::Kind::NonTensorData:
      return value.non_tensor_data().data;
    case Value::Kind::NonTensorStack:
      return value.non_tensor_stack().tolist();
    case Value::Kind::TensorDict:
      return tensordict_to_json(value.tensordict());
  }
  throw TypeError("to_json: unknown value kind");
}

const Json* stored_json(const Value& value) {
  if (value.is_non_tensor_data()) return &value.non_tensor_data().data;
  // A row of a stacked field (stack[0]) holds one item with no dims left: Python reads the item.
  if (value.is_non_tensor_stack() && value.non_tensor_stack().shape().empty()) {
    return &value.non_tensor_stack().items().front();
  }
  return nullptr;
}

void wrong_kind(const ClassSpec& spec, size_t i, const Json& actual) {
  const FieldSpec& field = spec.fields.at(i);
  std::string text = actual.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  throw TypeError(where(spec, field) + " expects " + kind_name(field.kind) + ", got " +
                  json_kind(actual) + " " + text +
                  (actual.is_array() ? " (one value per batch element after stacking? read it "
                                       "with get(\"" +
                                           std::string(field.name) + "\"))"
                                     : ""));
}

namespace {

// Scalars stored as 0-dim tensors (numbers without nocast) read without a JSON detour.
template <class T, class Check>
void read_scalar(const Value& value, const ClassSpec& spec, size_t i, T& out, Check is_kind) {
  if (const Json* json = stored_json(value)) {
    if (!is_kind(*json)) wrong_kind(spec, i, *json);
    out = json->get<T>();
  } else if (value.is_tensor() && value.tensor().dim() == 0) {
    out = value.tensor().item<T>();
  } else {
    wrong_kind(spec, i, to_json(value));
  }
}

template <class T>
void read_number_list(const Value& value, const ClassSpec& spec, size_t i, std::vector<T>& out) {
  if (value.is_tensor() && value.tensor().dim() == 1) {
    const at::Tensor t =
        value.tensor().to(at::kCPU, c10::CppTypeToScalarType<T>::value).contiguous();
    out.assign(t.data_ptr<T>(), t.data_ptr<T>() + t.numel());
    return;
  }
  const Json* stored = stored_json(value);
  const Json converted = stored ? Json() : to_json(value);
  const Json& json = stored ? *stored : converted;
  if (!json.is_array() ||
      !std::all_of(json.begin(), json.end(), [](const Json& x) { return x.is_number(); })) {
    wrong_kind(spec, i, json);
  }
  out = json.get<std::vector<T>>();
}

}  // namespace

void read(const Value& value, const ClassSpec& spec, size_t i, std::string& out) {
  const Json* json = stored_json(value);
  if (!json || !json->is_string()) wrong_kind(spec, i, json ? *json : to_json(value));
  out = json->get_ref<const std::string&>();
}
void read(const Value& value, const ClassSpec& spec, size_t i, int64_t& out) {
  read_scalar(value, spec, i, out, [](const Json& j) { return j.is_number_integer(); });
}
void read(const Value& value, const ClassSpec& spec, size_t i, double& out) {
  read_scalar(value, spec, i, out, [](const Json& j) { return j.is_number(); });
}
void read(const Value& value, const ClassSpec& spec, size_t i, bool& out) {
  read_scalar(value, spec, i, out, [](const Json& j) { return j.is_boolean(); });
}
void read(const Value& value, const ClassSpec&, size_t, Json& out) {
  const Json* json = stored_json(value);
  out = json ? *json : to_json(value);
}
void read(const Value& value, const ClassSpec& spec, size_t i, std::vector<int64_t>& out) {
  read_number_list(value, spec, i, out);
}
void read(const Value& value, const ClassSpec& spec, size_t i, std::vector<double>& out) {
  read_number_list(value, spec, i, out);
}

void read(const Value& value, const ClassSpec& spec, size_t i, TensorDict& out) {
  if (!value.is_tensordict()) wrong_kind(spec, i, to_json(value));
  out = value.tensordict();
}

Json read_any_per_element(const TensorDict& lazy, const ClassSpec& spec, size_t field) {
  const std::string name(spec.fields.at(field).name);
  Json out = Json::array();
  for (const auto& element : lazy.tensordicts()) {
    if (element.is_lazy_stack() && element.stack_dim() == 0) {
      out.push_back(read_any_per_element(element, spec, field));
    } else if (!element.contains(name)) {
      out.push_back(Json());
    } else {
      Json value;
      read(element.get_value(name), spec, field, value);
      out.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace tensordict::detail::tc
