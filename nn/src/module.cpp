// TensorDictModule and TensorDictSequential (tensordict/nn/module.h): reading in_keys, checking
// and writing out_keys, chaining modules.
#include "tensordict/nn/module.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <exception>
#include <string>

namespace tensordict::nn {
namespace {

class TensorDictIO final : public KeyIO {
 public:
  explicit TensorDictIO(TensorDict& td) : td_(td) {}
  std::optional<Value> read(const NestedKey& key) const override {
    if (!key.is_nested()) {  // one lookup for the common case (-1 for a lazy stack, below)
      const int64_t slot = td_.slot_of(key.front());
      if (slot >= 0) return td_.value_at(static_cast<size_t>(slot));
    }
    if (!td_.contains(key)) return std::nullopt;
    return td_.get_value(key);
  }
  void write(const NestedKey& key, Value value) override { td_.set(key, std::move(value)); }
  void remove(const NestedKey& key) override {
    if (td_.contains(key)) td_.del_(key);
  }
  const BatchSize& batch_size() const override { return td_.batch_size(); }

 private:
  TensorDict& td_;  // the caller's handle, which outlives the run
};

// Reads from the input, writes into another TensorDict (WriteTo::NewTensorDict, EmptyLike).
class SplitIO final : public KeyIO {
 public:
  SplitIO(TensorDict& in, TensorDict& out) : in_(in), out_(out) {}
  std::optional<Value> read(const NestedKey& key) const override {
    if (out_.contains(key)) return out_.get_value(key);  // an earlier module's output
    return TensorDictIO(in_).read(key);
  }
  void write(const NestedKey& key, Value value) override { out_.set(key, std::move(value)); }
  void remove(const NestedKey& key) override {
    if (out_.contains(key)) out_.del_(key);
  }
  const BatchSize& batch_size() const override { return out_.batch_size(); }

 private:
  TensorDict& in_;
  TensorDict& out_;
};

thread_local bool skip_existing_mode = false;

std::string keys_repr(const std::vector<NestedKey>& keys) {
  std::string out = "[";
  for (size_t i = 0; i < keys.size(); ++i) out += (i ? ", " : "") + keys[i].repr();
  return out + "]";
}

bool contains(const std::vector<NestedKey>& keys, const NestedKey& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// The first `n` parts of `key`.
NestedKey prefix(const NestedKey& key, size_t n) {
  return NestedKey(std::vector<std::string>(key.begin(), key.begin() + n));
}

// What a write replaced, to put back when a later write fails.
struct Undo {
  const NestedKey* key;           // an out_key
  std::optional<Value> previous;  // its value before, or nullopt when it had none
  size_t created = 0;             // for nullopt: the length of the shortest prefix it created
};

// The text of an exception from inside a module: c10::Error without its C++ backtrace.
std::string inner_text(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

// The shape whose leading dims must be the batch size (a view: no copy), or nullopt for values
// without one.
std::optional<at::IntArrayRef> leading_shape(const Value& value) {
  if (const at::Tensor* t = value.tensor_if()) return t->sizes();
  if (value.is_tensordict()) return at::IntArrayRef(value.tensordict().batch_size());
  return std::nullopt;
}

}  // namespace

bool skip_existing() { return skip_existing_mode; }

SkipExistingGuard::SkipExistingGuard(bool mode) : previous_(skip_existing_mode) {
  skip_existing_mode = mode;
}
SkipExistingGuard::~SkipExistingGuard() { skip_existing_mode = previous_; }

TensorDict TensorDictModuleBase::forward(TensorDict td) const {
  if (write_to_ == WriteTo::Input) {
    TensorDictIO io(td);
    run(io);
    return td;
  }
  TensorDict out = write_to_ == WriteTo::EmptyLike ? td.empty() : TensorDict();
  SplitIO io(td, out);
  run(io);
  return out;
}

std::vector<at::Tensor> TensorDictModuleBase::dispatch_tensors(
    const std::vector<at::Tensor>& tensors) const {
  if (tensors.size() != in_keys_.size()) {
    throw TypeError("TensorDictModule '" + name_ + "': dispatch takes " +
                    std::to_string(in_keys_.size()) + " tensors (in_keys " + keys_repr(in_keys_) +
                    "), not " + std::to_string(tensors.size()));
  }
  TensorDict td;
  for (size_t i = 0; i < tensors.size(); ++i) td.set(in_keys_[i], tensors[i]);
  const TensorDict out = forward(td);
  std::vector<at::Tensor> results;
  for (const auto& key : out_keys_) {
    const Value value = out.get_value(key);
    const at::Tensor* t = value.tensor_if();
    if (t == nullptr) {
      throw TypeError("TensorDictModule '" + name_ + "': dispatch returns tensors, but out_key " +
                      key.repr() + " holds " + value.kind_name());
    }
    results.push_back(*t);
  }
  return results;
}

void TensorDictModuleBase::select(const std::vector<NestedKey>& keys, const char* who) {
  for (const auto& key : keys) {
    if (!contains(all_out_keys_, key)) {
      throw KeyError(std::string(who) + ": " + key.repr() + " is not an out_key (out_keys " +
                     keys_repr(all_out_keys_) + ")");
    }
  }
  out_keys_ = keys.empty() ? all_out_keys_ : keys;
}

bool TensorDictModuleBase::skips(const KeyIO& io) const {
  if (!skip_existing_mode) return false;
  for (const auto& key : out_keys_) {
    if (contains(in_keys_, key) || !io.read(key)) return false;
  }
  return true;
}

namespace detail {

std::vector<Value> outputs_of(at::Tensor out) { return {Value(std::move(out))}; }

std::vector<Value> outputs_of(std::vector<at::Tensor> out) {
  return {std::make_move_iterator(out.begin()), std::make_move_iterator(out.end())};
}

std::vector<Value> outputs_of(torch::nn::AnyValue out) {
  if (auto* t = out.try_get<at::Tensor>()) return outputs_of(*t);
  if (auto* v = out.try_get<std::vector<at::Tensor>>()) return outputs_of(*v);
  if (auto* t2 = out.try_get<std::tuple<at::Tensor, at::Tensor>>()) return outputs_of(*t2);
  if (auto* t3 = out.try_get<std::tuple<at::Tensor, at::Tensor, at::Tensor>>()) {
    return outputs_of(*t3);
  }
  if (auto* t4 = out.try_get<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>>()) {
    return outputs_of(*t4);
  }
  throw TypeError(std::string("the AnyModule returned a ") + out.type_info().name() +
                  ", not a tensor, a tuple of 2 to 4 tensors or a std::vector of tensors");
}

const at::Tensor& input_tensor(const std::vector<Value>& inputs, size_t i) {
  if (const at::Tensor* t = inputs[i].tensor_if()) return *t;
  throw InputNotATensor{i};
}

void throw_arity(size_t) { throw WrongInputCount{}; }

std::string module_name(const torch::nn::Module& module) {
  std::string name = module.name();
  const std::string impl = "Impl";
  if (name.size() > impl.size() &&
      name.compare(name.size() - impl.size(), impl.size(), impl) == 0) {
    name.resize(name.size() - impl.size());
  }
  return name;
}

FieldValue to_field_value(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Tensor:
      return FieldValue(value.tensor());
    case Value::Kind::TensorDict:
      return FieldValue(value.tensordict());
    case Value::Kind::NonTensorData:
      return FieldValue(value.non_tensor_data().data);
    case Value::Kind::NonTensorStack:
      return FieldValue(value.non_tensor_stack().tolist());
  }
  throw TypeError(std::string("cannot store a ") + value.kind_name() + " in a field");
}

}  // namespace detail

TensorDictModule::TensorDictModule(ModuleFn fn, std::vector<NestedKey> in_keys,
                                   std::vector<NestedKey> out_keys, std::string name, Tag)
    : TensorDictModuleBase(std::move(in_keys), std::move(out_keys), std::move(name)),
      fn_(std::move(fn)) {}

void TensorDictModule::run(KeyIO& io) const {
  // The name for messages is built on the error paths only: a call that succeeds allocates no
  // string.
  const auto who = [this] { return "TensorDictModule '" + name() + "'"; };
  if (skips(io)) return;
  // The in_keys in order; the last ones may be missing from the data, as Python passes None for
  // them: the module is then called without them (their defaults), or refuses.
  std::vector<Value> inputs;
  inputs.reserve(in_keys().size());
  std::optional<size_t> first_missing;
  for (size_t i = 0; i < in_keys().size(); ++i) {
    std::optional<Value> value = io.read(in_keys()[i]);
    if (!value) {
      if (!first_missing) first_missing = i;
    } else if (first_missing) {
      throw KeyError(who() + ": missing in_key " + in_keys()[*first_missing].repr() +
                     ", which a later in_key " + in_keys()[i].repr() + " follows");
    } else {
      inputs.push_back(std::move(*value));
    }
  }
  const auto missing = [&] {  // with what the module takes (an exported package's inputs)
    return KeyError(who() + ": missing in_key " + in_keys()[*first_missing].repr() +
                    " (it takes in_keys " + keys_repr(in_keys()) + ")");
  };
  std::vector<Value> outputs;
  try {
    outputs = fn_(inputs, io.batch_size());
  } catch (const detail::InputNotATensor& e) {
    throw TypeError(who() + ": in_key " + in_keys()[e.index].repr() + " holds " +
                    inputs[e.index].kind_name() + ", but the module takes tensors");
  } catch (const detail::WrongInputCount&) {
    if (first_missing) throw missing();
    throw TypeError(who() + ": the module cannot be called with " + std::to_string(inputs.size()) +
                    " tensors (in_keys " + keys_repr(in_keys()) + ")");
  } catch (const Error&) {
    throw;  // the runtime's own errors name what failed already
  } catch (const std::exception& e) {
    // As Python's `raise err from RuntimeError("TensorDictModule failed with ...")`: the message
    // says which module failed, and the original stays reachable (std::rethrow_if_nested).
    std::throw_with_nested(ModuleError(who() + " (in_keys " + keys_repr(in_keys()) + ", out_keys " +
                                       keys_repr(out_keys()) + ") failed: " + inner_text(e)));
  }
  const std::vector<NestedKey>& returned = all_out_keys();
  if (outputs.size() != returned.size()) {
    throw Error(who() + ": the module returned " + std::to_string(outputs.size()) +
                " outputs for " + std::to_string(returned.size()) + " out_keys " +
                keys_repr(returned));
  }
  // Every output is checked before the first is written, and a write that fails (a nested
  // out_key through a tensor, a field's check) undoes the ones before: a failure changes nothing.
  const BatchSize& batch = io.batch_size();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto shape = leading_shape(outputs[i]);
    if (shape &&
        (shape->size() < batch.size() || !std::equal(batch.begin(), batch.end(), shape->begin()))) {
      throw ShapeError(who() + ": output " + returned[i].repr() + " has shape " +
                       shape_str(*shape) + ", whose leading dims are not the batch size " +
                       shape_str(batch));
    }
  }
  // What is written: the selected out_keys but "_"; an entry at an unselected one goes.
  const bool selected_all = out_keys().size() == returned.size();
  std::vector<Undo> undo;
  undo.reserve(outputs.size());
  try {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const NestedKey& key = returned[i];
      if (key == NestedKey(kDropped)) continue;
      Undo step{&key, io.read(key)};
      if (!selected_all && !contains(out_keys(), key)) {
        if (step.previous && !contains(in_keys(), key)) {
          io.remove(key);
          undo.push_back(std::move(step));
        }
        continue;
      }
      if (!step.previous && key.is_nested()) {
        step.created = 1;
        while (step.created < key.size() && io.read(prefix(key, step.created))) ++step.created;
      }
      io.write(key, std::move(outputs[i]));
      undo.push_back(std::move(step));
    }
  } catch (...) {
    for (auto step = undo.rbegin(); step != undo.rend(); ++step) {
      if (step->previous) {
        io.write(*step->key, std::move(*step->previous));
      } else {
        io.remove(step->created ? prefix(*step->key, step->created) : *step->key);
      }
    }
    throw;
  }
}

namespace {

// in_keys: read before any module writes them; out_keys: every key written, first write first.
std::pair<std::vector<NestedKey>, std::vector<NestedKey>> chain_keys(
    const std::vector<std::shared_ptr<const TensorDictModuleBase>>& modules) {
  std::vector<NestedKey> in_keys;
  std::vector<NestedKey> out_keys;
  for (const auto& module : modules) {
    if (module == nullptr) throw Error("TensorDictSequential: a module is null");
    for (const auto& key : module->in_keys()) {
      if (!contains(out_keys, key) && !contains(in_keys, key)) in_keys.push_back(key);
    }
    for (const auto& key : module->out_keys()) {
      if (!contains(out_keys, key) && key != NestedKey(TensorDictModule::kDropped)) {
        out_keys.push_back(key);
      }
    }
  }
  return {std::move(in_keys), std::move(out_keys)};
}

}  // namespace

TensorDictSequential::TensorDictSequential(
    std::vector<std::shared_ptr<const TensorDictModuleBase>> modules)
    : TensorDictSequential(chain_keys(modules), modules) {}

TensorDictSequential::TensorDictSequential(
    std::pair<std::vector<NestedKey>, std::vector<NestedKey>> keys,
    const std::vector<std::shared_ptr<const TensorDictModuleBase>>& modules)
    : TensorDictModuleBase(std::move(keys.first), std::move(keys.second), "TensorDictSequential"),
      modules_(modules) {}

void TensorDictSequential::run(KeyIO& io) const {
  if (skips(io)) return;
  for (const auto& module : modules_) module->run(io);
  if (out_keys().size() == all_out_keys().size()) return;
  for (const auto& key : all_out_keys()) {
    // An input that a module overwrote is still the caller's key: it stays.
    if (!contains(out_keys(), key) && !contains(in_keys(), key)) io.remove(key);
  }
}

}  // namespace tensordict::nn
