// TorchScript modules on TensorDicts (tensordict/nn/script.h): IValue conversions, the forward
// of a TensorDictModule over a torch::jit::Module, and module parameters as TensorDicts.
#include "tensordict/nn/script.h"

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/jit_type.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

namespace tensordict::nn {
namespace {

// value_from_ivalue, with numbers as tensors when `numbers_as_tensors` (a module's outputs).
Value convert_ivalue(const c10::IValue& value, const BatchSize& batch_size, const NestedKey& key,
                     bool numbers_as_tensors);

[[noreturn]] void unconvertible(const NestedKey& key, const std::string& what) {
  throw TypeError("key " + key.repr() + ": " + what);
}

// The one type of `values`, or Any when they differ (Dict[str, Any] / List[Any]); ints and floats
// together make float, as in JSON.
c10::TypePtr common_type(const std::vector<c10::IValue>& values) {
  if (values.empty()) return c10::AnyType::get();
  // A tensor's own type carries its dtype and sizes; containers are typed over plain Tensor (a
  // Dict(str, Float(8, 5)) is no Dict(str, Tensor): containers are invariant).
  auto type_of = [](const c10::IValue& value) -> c10::TypePtr {
    return value.isTensor() ? c10::TensorType::get() : value.type();
  };
  c10::TypePtr type = type_of(values.front());
  for (const auto& value : values) {
    c10::TypePtr next = type_of(value);
    if (*next == *type) continue;
    const bool numbers =
        (type->kind() == c10::TypeKind::IntType || type->kind() == c10::TypeKind::FloatType) &&
        (next->kind() == c10::TypeKind::IntType || next->kind() == c10::TypeKind::FloatType);
    if (!numbers) return c10::AnyType::get();
    type = c10::FloatType::get();
  }
  return type;
}

c10::IValue json_to_ivalue(const Json& json, const NestedKey& key) {
  switch (json.type()) {
    case Json::value_t::null:
      return {};
    case Json::value_t::boolean:
      return json.get<bool>();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return json.get<int64_t>();
    case Json::value_t::number_float:
      return json.get<double>();
    case Json::value_t::string:
      return json.get<std::string>();
    case Json::value_t::array: {
      std::vector<c10::IValue> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(json_to_ivalue(item, key));
      c10::TypePtr type = common_type(items);
      if (type->kind() == c10::TypeKind::FloatType) {
        for (auto& item : items) item = item.toScalar().toDouble();
      }
      c10::impl::GenericList list(type);
      for (auto& item : items) list.push_back(std::move(item));
      return list;
    }
    default:
      unconvertible(key, std::string("a JSON ") + json.type_name() +
                             " has no TorchScript value (str, int, float, bool, None or lists)");
  }
}

Json ivalue_to_json(const c10::IValue& value, const NestedKey& key) {
  if (value.isNone()) return nullptr;
  if (value.isBool()) return value.toBool();
  if (value.isInt()) return value.toInt();
  if (value.isDouble()) return value.toDouble();
  if (value.isString()) return value.toStringRef();
  if (value.isList()) {
    Json out = Json::array();
    for (const c10::IValue& item : value.toListRef()) out.push_back(ivalue_to_json(item, key));
    return out;
  }
  unconvertible(key, "a " + value.type()->str() +
                         " is not data a TensorDict holds (tensors, dicts, str, int, float, "
                         "bool, None and lists of those)");
}

// `td` as a dict; `prefix` is its key in the outermost TensorDict, for messages.
c10::IValue dict_to_ivalue(const TensorDict& td, const std::optional<NestedKey>& prefix) {
  if (td.is_lazy_stack()) {
    throw TypeError("to_ivalue: a lazy stack has no TorchScript value (densify() it first)");
  }
  std::vector<std::string> names;
  std::vector<c10::IValue> values;
  for (const auto& [key, value] : td.items()) {
    names.push_back(key.front());
    values.push_back(to_ivalue(value, prefix ? prefix->child(key.front()) : key));
  }
  c10::impl::GenericDict dict(c10::StringType::get(), common_type(values));
  for (size_t i = 0; i < names.size(); ++i) dict.insert(names[i], std::move(values[i]));
  return dict;
}

std::string script_name(const torch::jit::Module& module) {
  const auto& qualified = module.type()->name();
  return qualified ? qualified->name() : "ScriptModule";
}

// TorchScript modules hold their tensors as attributes: assign() replaces the attribute, which
// forward reads on every call.
class ScriptModuleAccess final : public tensordict::detail::ModuleAccess {
 public:
  explicit ScriptModuleAccess(torch::jit::Module module) : module_(std::move(module)) {}

  std::vector<std::pair<std::string, at::Tensor>> tensors() const override {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& item : module_.named_parameters(false)) {
      if (item.value.defined()) out.emplace_back(item.name, item.value);
    }
    for (const auto& item : module_.named_buffers(false)) {
      if (item.value.defined()) out.emplace_back(item.name, item.value);
    }
    return out;
  }
  std::vector<std::pair<std::string, std::unique_ptr<ModuleAccess>>> children() const override {
    std::vector<std::pair<std::string, std::unique_ptr<ModuleAccess>>> out;
    for (const auto& item : module_.named_children()) {
      out.emplace_back(item.name, std::make_unique<ScriptModuleAccess>(item.value));
    }
    return out;
  }
  void assign(const std::string& name, const at::Tensor& value) override {
    module_.setattr(name, value);
  }
  std::string name() const override { return script_name(module_); }

 private:
  torch::jit::Module module_;
};

// The str IValues of a key's parts, made once: a dict lookup or insert by std::string would
// make a new str IValue (an allocation) on every call.
std::vector<c10::IValue> ivalue_parts(const NestedKey& key) {
  return std::vector<c10::IValue>(key.begin(), key.end());
}

// forward(self, td: Dict[str, ...]) -> Dict[str, ...]: the in_keys go in one dict, the out_keys
// are read from the dict it returns. What can be is worked out once, when the module is built:
// the forward method, the key IValues, and whether the common case applies (forward takes
// Dict[str, Tensor] and every in_key is a plain key): then the typed dict is built straight from
// the input tensors, and its type needs no check.
ModuleFn dict_forward(torch::jit::Module module, c10::TypePtr arg_type,
                      std::vector<NestedKey> in_keys, const std::vector<NestedKey>& out_keys) {
  const bool tensor_dict =
      *arg_type == *c10::DictType::create(c10::StringType::get(), c10::TensorType::get());
  const bool flat = std::none_of(in_keys.begin(), in_keys.end(),
                                 [](const NestedKey& key) { return key.is_nested(); });
  std::vector<c10::IValue> in_names;
  if (tensor_dict && flat) {
    for (const auto& key : in_keys) in_names.emplace_back(key.front());
  }
  std::vector<std::vector<c10::IValue>> out_paths;
  out_paths.reserve(out_keys.size());
  for (const auto& key : out_keys) out_paths.push_back(ivalue_parts(key));
  torch::jit::Method method = module.get_method("forward");
  return [module = std::move(module), method = std::move(method), arg_type = std::move(arg_type),
          in_keys = std::move(in_keys), in_names = std::move(in_names), out_keys,
          out_paths = std::move(out_paths)](const std::vector<Value>& inputs,
                                            const BatchSize& batch_size) mutable {
    if (inputs.size() < in_keys.size()) throw detail::WrongInputCount{};  // the dict holds all
    const bool all_tensors =
        !in_names.empty() && std::all_of(inputs.begin(), inputs.end(),
                                         [](const Value& value) { return value.is_tensor(); });
    c10::IValue arg;
    if (all_tensors) {
      c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
      dict.reserve(inputs.size());
      // insert_or_assign: a key given twice holds its last value, as TensorDict::set does.
      for (size_t i = 0; i < inputs.size(); ++i) {
        dict.insert_or_assign(in_names[i], inputs[i].tensor());
      }
      arg = std::move(dict);
    } else {  // nested keys, non-tensor data, or a forward taking another dict type
      TensorDict td({}, batch_size);
      for (size_t i = 0; i < inputs.size(); ++i) td.set(in_keys[i], inputs[i]);
      arg = to_ivalue(td);
      if (!arg.type()->isSubtypeOf(*arg_type)) {
        throw TypeError("forward of " + script_name(module) + " takes " + arg_type->str() +
                        ", but the in_keys make a " + arg.type()->str());
      }
    }
    // Method::run skips forward's own check of the argument against its schema (which builds the
    // dict's type anew on every call): the type was checked above, or is Dict[str, Tensor] by
    // construction. Room for `self`, which run() inserts in front.
    torch::jit::Stack stack;
    stack.reserve(2);
    stack.push_back(std::move(arg));
    method.run(stack);
    const c10::IValue result = std::move(stack.front());
    if (!result.isGenericDict()) {
      throw TypeError("forward of " + script_name(module) + " returned a " + result.type()->str() +
                      ", not a dict");
    }
    std::vector<Value> outputs;
    outputs.reserve(out_keys.size());
    for (size_t k = 0; k < out_keys.size(); ++k) {
      c10::IValue entry = result;
      for (const c10::IValue& part : out_paths[k]) {
        std::optional<c10::IValue> found;
        if (entry.isGenericDict()) {
          const auto dict = entry.toGenericDict();
          const auto it = dict.find(part);
          if (it != dict.end()) found = it->value();
        }
        if (!found) {
          throw KeyError("forward of " + script_name(module) + " returned no out_key " +
                         out_keys[k].repr());
        }
        entry = std::move(*found);
      }
      outputs.push_back(convert_ivalue(entry, batch_size, out_keys[k], true));
    }
    return outputs;
  };
}

// forward(self, a, b, ...) -> T or Tuple[...]: in_key i gives argument `slots[i]` (1 for the
// first after self), one result per out_key. The arguments' types vary with the data, so
// forward's schema check stays (Method::operator()).
ModuleFn positional_forward(torch::jit::Module module, std::vector<NestedKey> in_keys,
                            std::vector<NestedKey> out_keys, std::vector<size_t> slots) {
  torch::jit::Method method = module.get_method("forward");
  return [method = std::move(method), in_keys = std::move(in_keys), out_keys = std::move(out_keys),
          slots = std::move(slots)](const std::vector<Value>& inputs, const BatchSize& batch_size) {
    const auto& arguments = method.function().getSchema().arguments();  // [0] is self
    std::vector<std::optional<c10::IValue>> given(arguments.size());
    for (size_t i = 0; i < inputs.size(); ++i) given[slots[i]] = to_ivalue(inputs[i], in_keys[i]);
    // An argument no in_key gives (or whose in_key the data lacks): its default, or None for an
    // Optional one, as Python passes None for an in_key it does not find.
    std::vector<c10::IValue> args;
    args.reserve(arguments.size());  // room for `self`, inserted in front
    for (size_t a = 1; a < arguments.size(); ++a) {
      if (given[a]) {
        args.push_back(std::move(*given[a]));
      } else if (arguments[a].default_value()) {
        args.push_back(*arguments[a].default_value());
      } else if (arguments[a].type()->kind() == c10::TypeKind::OptionalType) {
        args.emplace_back();
      } else {
        throw detail::WrongInputCount{};
      }
    }
    c10::IValue result = method(std::move(args));
    std::vector<c10::IValue> results;
    if (result.isTuple()) {
      const auto& elements = result.toTupleRef().elements();
      results.assign(elements.begin(), elements.end());
    } else if (result.isTensorList()) {
      for (const at::Tensor& t : result.toTensorVector()) results.emplace_back(t);
    } else {
      results.push_back(std::move(result));
    }
    std::vector<Value> outputs;
    outputs.reserve(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      const NestedKey key = i < out_keys.size() ? out_keys[i] : NestedKey(std::to_string(i));
      outputs.push_back(convert_ivalue(results[i], batch_size, key, true));
    }
    return outputs;
  };
}

}  // namespace

c10::IValue to_ivalue(const Value& value, const NestedKey& key) {
  switch (value.kind()) {
    case Value::Kind::Tensor:
      return value.tensor();
    case Value::Kind::TensorDict:
      return dict_to_ivalue(value.tensordict(), key);
    case Value::Kind::NonTensorData:
      return json_to_ivalue(value.non_tensor_data().data, key);
    case Value::Kind::NonTensorStack:
      return json_to_ivalue(value.non_tensor_stack().tolist(), key);
  }
  unconvertible(key, std::string("a ") + value.kind_name() + " has no TorchScript value");
}

c10::IValue to_ivalue(const TensorDict& td) { return dict_to_ivalue(td, std::nullopt); }

namespace {

// A number as Python's TensorDict.set stores it: a 0-dim tensor (bool, int64, float32 as
// torch.as_tensor makes them); a flat list of numbers a 1-dim one (float64 for floats, as numpy
// reads them). Nullopt for other values.
std::optional<at::Tensor> number_as_tensor(const c10::IValue& value) {
  if (value.isBool()) return at::scalar_tensor(value.toBool(), at::kBool);
  if (value.isInt()) return at::scalar_tensor(value.toInt(), at::kLong);
  if (value.isDouble()) return at::scalar_tensor(value.toDouble(), at::kFloat);
  if (value.isIntList()) return at::tensor(value.toIntVector());
  if (value.isDoubleList()) return at::tensor(value.toDoubleVector());
  if (value.isBoolList()) {
    std::vector<int64_t> flags;
    for (const bool b : value.toBoolList()) flags.push_back(b);
    return at::tensor(flags).to(at::kBool);
  }
  return std::nullopt;
}

Value convert_ivalue(const c10::IValue& value, const BatchSize& batch_size, const NestedKey& key,
                     bool numbers_as_tensors) {
  if (value.isTensor()) return value.toTensor();
  if (value.isGenericDict()) {
    TensorDict td({}, batch_size);
    for (const auto& entry : value.toGenericDict()) {
      if (!entry.key().isString()) {
        unconvertible(key, "a dict key of type " + entry.key().type()->str() + " is not a str");
      }
      const std::string& name = entry.key().toStringRef();
      td.set(name, convert_ivalue(entry.value(), batch_size, key.child(name), numbers_as_tensors));
    }
    return td;
  }
  if (numbers_as_tensors) {
    if (auto tensor = number_as_tensor(value)) return *tensor;
  }
  return NonTensorData{ivalue_to_json(value, key)};
}

}  // namespace

Value value_from_ivalue(const c10::IValue& value, const BatchSize& batch_size,
                        const NestedKey& key) {
  return convert_ivalue(value, batch_size, key, false);
}

TensorDict from_ivalue(const c10::IValue& value, BatchSize batch_size) {
  if (!value.isGenericDict()) {
    throw TypeError("from_ivalue: a " + value.type()->str() + " is not a dict");
  }
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString()) {
      throw TypeError("from_ivalue: a dict key of type " + entry.key().type()->str() +
                      " is not a str");
    }
  }
  TensorDict td({}, std::move(batch_size));
  for (const auto& entry : value.toGenericDict()) {
    const std::string& name = entry.key().toStringRef();
    td.set(name, value_from_ivalue(entry.value(), td.batch_size(), NestedKey(name)));
  }
  return td;
}

TensorDict from_module(const torch::jit::Module& module, bool as_module) {
  return tensordict::detail::from_module(ScriptModuleAccess(module), as_module);
}

TensorDict to_module(const TensorDict& params, torch::jit::Module& module, bool inplace,
                     bool return_swap) {
  ScriptModuleAccess access(module);
  return tensordict::detail::to_module(params, access, inplace, return_swap);
}

ModuleSwap to_module_scoped(const TensorDict& params, const torch::jit::Module& module) {
  auto access = std::make_unique<ScriptModuleAccess>(module);
  TensorDict originals = tensordict::detail::to_module(params, *access, false, true);
  return ModuleSwap(std::move(access), std::move(originals));
}

std::vector<at::Tensor> ensemble_apply(const TensorDict& params, const torch::jit::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn) {
  ScriptModuleAccess access(module);
  return tensordict::detail::ensemble_apply(params, access, fn);
}

namespace detail {

std::string script_module_name(const torch::jit::Module& module) { return script_name(module); }

ModuleFn script_module_fn(const torch::jit::Module& module, const std::vector<NestedKey>& in_keys,
                          const std::vector<NestedKey>& out_keys) {
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  // arguments[0] is self.
  if (arguments.size() == 2 && arguments[1].type()->kind() == c10::TypeKind::DictType) {
    return dict_forward(module, arguments[1].type(), in_keys, out_keys);
  }
  // Arguments past the in_keys must have defaults: forward(x, scale: Optional[Tensor] = None)
  // runs with in_keys {"x"}.
  size_t required = 0;
  for (size_t i = 1; i < arguments.size(); ++i) required += !arguments[i].default_value();
  if (in_keys.size() + 1 > arguments.size() || in_keys.size() < required) {
    throw TypeError("TensorDictModule '" + script_name(module) + "': forward takes " +
                    std::to_string(arguments.size() - 1) + " arguments (" +
                    std::to_string(required) + " without a default), the module has " +
                    std::to_string(in_keys.size()) + " in_keys");
  }
  std::vector<size_t> slots(in_keys.size());
  std::iota(slots.begin(), slots.end(), 1);
  return positional_forward(module, in_keys, out_keys, std::move(slots));
}

ModuleFn script_keyword_fn(const torch::jit::Module& module, const ArgumentKeys& in_keys,
                           const std::vector<NestedKey>& out_keys) {
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  std::vector<NestedKey> keys;
  std::vector<size_t> slots;
  for (const auto& [argument, key] : in_keys) {
    size_t slot = 1;
    while (slot < arguments.size() && arguments[slot].name() != argument) ++slot;
    if (slot == arguments.size()) {
      std::string names;
      for (size_t a = 1; a < arguments.size(); ++a)
        names += (a > 1 ? ", " : "") + arguments[a].name();
      throw KeyError("TensorDictModule '" + script_name(module) + "': forward has no argument '" +
                     argument + "' (it takes " + names + ")");
    }
    keys.push_back(key);
    slots.push_back(slot);
  }
  for (size_t a = 1; a < arguments.size(); ++a) {
    const bool given = std::find(slots.begin(), slots.end(), a) != slots.end();
    if (!given && !arguments[a].default_value() &&
        arguments[a].type()->kind() != c10::TypeKind::OptionalType) {
      throw TypeError("TensorDictModule '" + script_name(module) + "': forward's argument '" +
                      arguments[a].name() + "' has no default, and no in_key gives it");
    }
  }
  return positional_forward(module, std::move(keys), out_keys, std::move(slots));
}

std::vector<NestedKey> keyword_keys(const ArgumentKeys& in_keys) {
  std::vector<NestedKey> keys;
  for (const auto& entry : in_keys) keys.push_back(entry.second);
  return keys;
}

}  // namespace detail

TensorDictModule TensorDictModule::by_argument(const torch::jit::Module& module,
                                               ArgumentKeys argument_keys,
                                               std::vector<NestedKey> out_keys, std::string name) {
  return TensorDictModule(detail::script_keyword_fn(module, argument_keys, out_keys),
                          detail::keyword_keys(argument_keys), out_keys,
                          name.empty() ? detail::script_module_name(module) : std::move(name),
                          Tag{});
}

TensorDictModule TensorDictModule::by_key(
    const torch::jit::Module& module,
    const std::vector<std::pair<NestedKey, std::string>>& key_arguments,
    std::vector<NestedKey> out_keys, std::string name) {
  ArgumentKeys argument_keys;
  for (const auto& [key, argument] : key_arguments) argument_keys.emplace_back(argument, key);
  return by_argument(module, std::move(argument_keys), std::move(out_keys), std::move(name));
}

TensorDictModule::TensorDictModule(const torch::jit::Module& module, std::vector<NestedKey> in_keys,
                                   std::vector<NestedKey> out_keys, std::string name)
    : TensorDictModule(detail::script_module_fn(module, in_keys, out_keys), in_keys, out_keys,
                       name.empty() ? detail::script_module_name(module) : std::move(name), Tag{}) {
}

}  // namespace tensordict::nn
