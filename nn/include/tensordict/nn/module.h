#pragma once
/// \file
/// Models on TensorDicts (Python's tensordict.nn): TensorDictModule runs a module on the entries at
/// its in_keys and writes what it returns at its out_keys; TensorDictSequential chains modules.
///
/// \code
///   TensorDictModule actor(torch::nn::Linear(4, 2), {"obs"}, {"action"});
///   TensorDictModule loss([](const at::Tensor& a, const at::Tensor& t) { return (a - t).pow(2); },
///                         {"action", "target"}, {"loss"}, "mse");
///   TensorDictSequential both(actor, loss);          // in_keys obs, target; out_keys action, loss
///   both(data);                                      // writes into `data`, returns it
/// \endcode
///
/// A module is any callable over tensors (positional, up to kMaxModuleInputs), a torch::nn
/// ModuleHolder (torch::nn::Linear, torch::nn::Sequential, ...), a torch::nn::AnyModule, or a
/// TorchScript torch::jit::Module (see script.h for its forms). It returns one tensor, a tuple or a
/// std::vector of tensors, mapped in order onto the out_keys.
///
/// Generated tensorclasses run too: `module(obj)` reads and writes the fields through the class's
/// own get/set (so its casting and field checks apply), and `module.forward_as<Out>(in)` runs on a
/// copy of `in`'s structure and returns the outputs as an `Out` instance.

#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensordict/tensorclass.h"
#include "tensordict/tensordict.h"

namespace torch::jit {
struct Module;
}

namespace tensordict::nn {

class ExportedModel;

/// An exception raised inside a module's forward (a C++ callable, a torch::nn module, a
/// TorchScript or an exported model), rethrown naming the module and its in_keys and out_keys
/// with the original message. The original exception is nested: std::rethrow_if_nested(e)
/// rethrows it. The runtime's own errors (tensordict::Error) pass through unchanged.
class ModuleError : public Error {
 public:
  using Error::Error;
};

/// in_keys by forward argument (Python's dict in_keys): (argument, key) pairs.
using ArgumentKeys = std::vector<std::pair<std::string, NestedKey>>;

/// The most positional inputs a callable module can take.
inline constexpr size_t kMaxModuleInputs = 8;

/// Where a module reads its inputs and writes its outputs: a TensorDict or a tensorclass instance.
class KeyIO {
 public:
  virtual ~KeyIO() = default;
  /// The entry at `key`, or nullopt when there is none (a missing key, a None field).
  virtual std::optional<Value> read(const NestedKey& key) const = 0;
  /// Sets `key` to `value` (a TensorDict's set, a tensorclass's own set with its checks).
  virtual void write(const NestedKey& key, Value value) = 0;
  /// Removes `key` when present (TensorDictSequential::select_out_keys).
  virtual void remove(const NestedKey& key) = 0;
  /// The batch size of the data (that of outputs written as nested TensorDicts).
  virtual const BatchSize& batch_size() const = 0;
};

/// Where a TensorDictModule writes its outputs (Python's `inplace`).
enum class WriteTo {
  /// Into the TensorDict it runs on, which forward() returns (Python's inplace=True, the default).
  Input,
  /// Into a new TensorDict with batch size [] and no device (inplace=False).
  NewTensorDict,
  /// Into the input's empty() copy: its batch size and device, no entries (inplace="empty").
  EmptyLike,
};

/// Python's skip_existing(): whether modules whose out_keys are all present already are skipped
/// (for the current thread; set by SkipExistingGuard).
bool skip_existing();

/// Python's `with set_skip_existing(mode):` for the current thread, until the guard is destroyed.
/// While it is on, a module (or a TensorDictSequential) whose out_keys are all in the data, none
/// of them also an in_key, does not run.
class SkipExistingGuard {
 public:
  /// Sets the mode; the destructor restores the one before.
  explicit SkipExistingGuard(bool mode = true);
  ~SkipExistingGuard();
  SkipExistingGuard(const SkipExistingGuard&) = delete;
  SkipExistingGuard& operator=(const SkipExistingGuard&) = delete;

 private:
  bool previous_;
};

/// Base of TensorDictModule and TensorDictSequential: what runs on a TensorDict by keys.
class TensorDictModuleBase {
 public:
  virtual ~TensorDictModuleBase() = default;

  /// The keys read, in the order the module takes its inputs.
  const std::vector<NestedKey>& in_keys() const { return in_keys_; }
  /// The keys written: those select_out_keys kept (every one by default).
  const std::vector<NestedKey>& out_keys() const { return out_keys_; }
  /// Every key the module can write, in the order it returns its outputs (Python's
  /// out_keys_source), whatever select_out_keys kept.
  const std::vector<NestedKey>& all_out_keys() const { return all_out_keys_; }
  /// The name used in error messages.
  const std::string& name() const { return name_; }

  /// Runs on `td` and returns the result: `td` itself, written in place, unless a
  /// TensorDictModule's write_to() says otherwise.
  TensorDict forward(TensorDict td) const;
  /// forward(td): Python's `module(td)`.
  TensorDict operator()(TensorDict td) const { return forward(std::move(td)); }

  /// Python's dispatch (`module(obs=x)`): runs on tensors given in in_keys order, as a
  /// TensorDict of batch size [], and returns the tensors at out_keys, in order. TypeError for an
  /// output that is not a tensor.
  template <class... T>
  std::vector<at::Tensor> dispatch(const T&... tensors) const {
    return dispatch_tensors({tensors...});
  }
  /// dispatch() with the tensors in a vector.
  std::vector<at::Tensor> dispatch_tensors(const std::vector<at::Tensor>& tensors) const;

  /// Runs on a tensorclass instance in place, through its fields, and returns it.
  template <class C, std::enable_if_t<std::is_base_of_v<TensorClassTag, C>, int> = 0>
  C operator()(C obj) const;

  /// Typed in, typed out: runs on a structure copy of `in` (tensors shared, `in` unchanged) and
  /// returns the fields of `Out` found there as an `Out`.
  template <class Out, class In>
  Out forward_as(const In& in) const;

  /// Runs through `io`; what TensorDictModule and TensorDictSequential implement.
  virtual void run(KeyIO& io) const = 0;

 protected:
  /// The keys a subclass reads and writes, and its name for error messages.
  TensorDictModuleBase(std::vector<NestedKey> in_keys, std::vector<NestedKey> out_keys,
                       std::string name)
      : in_keys_(std::move(in_keys)),
        out_keys_(out_keys),
        all_out_keys_(std::move(out_keys)),
        name_(std::move(name)) {}
  /// Keeps `keys` of all_out_keys() as out_keys() (KeyError naming `who` for another key);
  /// every one when `keys` is empty.
  void select(const std::vector<NestedKey>& keys, const char* who);
  /// True when skip_existing() is on and every out_key is in `io`, none also an in_key.
  bool skips(const KeyIO& io) const;
  /// Where forward() writes (TensorDictModule::write_to).
  WriteTo write_to_ = WriteTo::Input;

 private:
  std::vector<NestedKey> in_keys_;
  std::vector<NestedKey> out_keys_;
  std::vector<NestedKey> all_out_keys_;
  std::string name_;
};

/// A module's call with its inputs in in_keys order, returning its outputs in out_keys order;
/// `batch_size` is that of the data it runs on (for outputs that become nested TensorDicts).
/// When the last in_keys are missing from the data, `inputs` holds the ones before them: a module
/// that cannot be called without them throws detail::WrongInputCount.
using ModuleFn = std::function<std::vector<Value>(const std::vector<Value>& inputs,
                                                  const BatchSize& batch_size)>;

namespace detail {

// ---- adapting a C++ callable to ModuleFn ------------------------------------------------------

std::vector<Value> outputs_of(at::Tensor out);
std::vector<Value> outputs_of(std::vector<at::Tensor> out);
/// An AnyModule's result: a tensor, a tuple of 2 to 4 tensors or a std::vector of tensors.
std::vector<Value> outputs_of(torch::nn::AnyValue out);
template <class... Ts>
std::vector<Value> outputs_of(std::tuple<Ts...> out) {
  std::vector<Value> values;
  values.reserve(sizeof...(Ts));
  std::apply([&](auto&... t) { (values.emplace_back(std::move(t)), ...); }, out);
  return values;
}

/// Thrown by the adapters, caught by TensorDictModule::run, which names the module and the key.
struct InputNotATensor {
  size_t index;
};
struct WrongInputCount {};
/// The tensor a positional module gets for input `i` (InputNotATensor otherwise).
const at::Tensor& input_tensor(const std::vector<Value>& inputs, size_t i);
[[noreturn]] void throw_arity(size_t inputs);

template <class F, size_t... I>
std::vector<Value> call_positional(F& fn, const std::vector<Value>& in, std::index_sequence<I...>) {
  return outputs_of(fn(input_tensor(in, I)...));
}

template <size_t>
using TensorArg = const at::Tensor&;
template <class F, class Indices>
struct InvocableWithTensors;
template <class F, size_t... I>
struct InvocableWithTensors<F, std::index_sequence<I...>> : std::is_invocable<F&, TensorArg<I>...> {
};

template <class F, size_t N = 0>
std::vector<Value> dispatch_arity(F& fn, const std::vector<Value>& in) {
  if constexpr (N > kMaxModuleInputs) {
    throw_arity(in.size());
  } else {
    if (in.size() == N) {
      if constexpr (InvocableWithTensors<F, std::make_index_sequence<N>>::value) {
        return call_positional(fn, in, std::make_index_sequence<N>());
      } else {
        throw_arity(in.size());
      }
    }
    return dispatch_arity<F, N + 1>(fn, in);
  }
}

// A torch::nn holder called as `holder->forward(tensors...)`, with any count of tensors its
// forward takes (defaulted arguments included: GRU's forward(input, hx = {}) runs with one or
// two); ModuleHolder::operator() cannot be probed for an arity (it fails hard).
template <class H>
struct HolderCall {
  H holder;
  template <class... T>
  auto operator()(const T&... inputs) -> decltype(std::declval<H&>()->forward(inputs...)) {
    return holder->forward(inputs...);
  }
};

template <class F>
auto callable(F module) {
  if constexpr (std::is_base_of_v<torch::detail::ModuleHolderIndicator, F>) {
    return HolderCall<F>{std::move(module)};
  } else {
    return module;
  }
}

template <class F>
ModuleFn positional(F fn) {
  return [fn = std::move(fn)](const std::vector<Value>& in, const BatchSize&) mutable {
    return dispatch_arity(fn, in);
  };
}

/// A torch::nn module's name without the implementation suffix: "torch::nn::Linear".
std::string module_name(const torch::nn::Module& module);
/// forward() of a TorchScript module (script.cpp): dict or positional, from its schema.
ModuleFn script_module_fn(const torch::jit::Module& module, const std::vector<NestedKey>& in_keys,
                          const std::vector<NestedKey>& out_keys);
/// forward() of a TorchScript module with its arguments given by name.
ModuleFn script_keyword_fn(const torch::jit::Module& module, const ArgumentKeys& in_keys,
                           const std::vector<NestedKey>& out_keys);
/// The keys of `in_keys`, in order.
std::vector<NestedKey> keyword_keys(const ArgumentKeys& in_keys);
std::string script_module_name(const torch::jit::Module& module);

template <class C>
class TensorClassIO final : public KeyIO {
 public:
  explicit TensorClassIO(C& obj) : obj_(obj) {}
  std::optional<Value> read(const NestedKey& key) const override {
    return obj_.get(key, std::optional<Value>());
  }
  // A nested field still None on the way is created (an empty TensorDict of the batch size, which
  // the nested class checks as it fills), as a TensorDict's set creates the collections on a
  // nested key; if the write is refused, it is None again (a refused write changes nothing).
  void write(const NestedKey& key, Value value) override {
    std::optional<NestedKey> created;
    for (size_t depth = 1; depth < key.size(); ++depth) {
      const NestedKey at(
          std::vector<std::string>(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(depth)));
      if (obj_.get(at, std::optional<Value>())) continue;
      obj_.set(at, FieldValue(TensorDict({}, obj_.batch_size(), obj_.device())));
      if (!created) created = at;
    }
    try {
      obj_.set(key, field_value(value));
    } catch (...) {
      if (created) obj_.set(*created, FieldValue());
      throw;
    }
  }
  void remove(const NestedKey& key) override { obj_.set(key, FieldValue()); }
  const BatchSize& batch_size() const override { return obj_.batch_size(); }

 private:
  static FieldValue field_value(const Value& value);
  C& obj_;
};

/// A Value as what a tensorclass field takes (non-tensor data as JSON).
FieldValue to_field_value(const Value& value);

template <class C>
FieldValue TensorClassIO<C>::field_value(const Value& value) {
  return to_field_value(value);
}

}  // namespace detail

/// Python's TensorDictModule: runs `module` on the entries at `in_keys`, writes its outputs at
/// `out_keys`. Errors name the module and the key: a missing in_key (KeyError), an output count
/// other than out_keys' (Error), an output whose leading dims are not the batch size
/// (ShapeError).
class TensorDictModule : public TensorDictModuleBase {
 public:
  /// A callable over tensors or a torch::nn ModuleHolder; `name` defaults to the module's name
  /// (a ModuleHolder's) or "TensorDictModule".
  template <class F,
            std::enable_if_t<!std::is_base_of_v<TensorDictModuleBase, std::decay_t<F>>, int> = 0>
  TensorDictModule(F module, std::vector<NestedKey> in_keys, std::vector<NestedKey> out_keys,
                   std::string name = "")
      : TensorDictModule(detail::positional(detail::callable(module)), std::move(in_keys),
                         std::move(out_keys), name.empty() ? default_name(module) : std::move(name),
                         Tag{}) {}
  /// A torch::nn::AnyModule (its any_forward); `name` defaults to the module's name.
  TensorDictModule(torch::nn::AnyModule module, std::vector<NestedKey> in_keys,
                   std::vector<NestedKey> out_keys, std::string name = "")
      : TensorDictModule(detail::positional([module](auto&&... inputs) mutable {
                           return module.any_forward(inputs...);
                         }),
                         std::move(in_keys), std::move(out_keys),
                         name.empty() ? detail::module_name(*module.ptr()) : std::move(name),
                         Tag{}) {}
  /// A TorchScript module: its forward takes the inputs positionally, or one Dict[str, Tensor]
  /// (nested dicts for nested keys) holding the in_keys, and then returns a dict holding the
  /// out_keys (script.h).
  TensorDictModule(const torch::jit::Module& module, std::vector<NestedKey> in_keys,
                   std::vector<NestedKey> out_keys, std::string name = "");
  /// A TorchScript module whose forward arguments read the keys `argument_keys` names (Python's
  /// dict in_keys, out_to_in_map=True): `{{"scale", {"params", "s"}}, {"x", "obs"}}`. Its in_keys
  /// are those keys, in this order; arguments no pair names take their defaults. KeyError for a
  /// name forward does not have, TypeError for an argument without a default that no pair gives.
  static TensorDictModule by_argument(const torch::jit::Module& module, ArgumentKeys argument_keys,
                                      std::vector<NestedKey> out_keys, std::string name = "");
  /// by_argument() with the pairs key first: `{{"obs", "x"}}` (Python's out_to_in_map=False).
  static TensorDictModule by_key(
      const torch::jit::Module& module,
      const std::vector<std::pair<NestedKey, std::string>>& key_arguments,
      std::vector<NestedKey> out_keys, std::string name = "");
  /// An exported model (exported.h): inputs and outputs in dicts are named by their keys,
  /// positional ones by `in_keys` / `out_keys` (which, given for a dict, rename its entries in
  /// order). The name defaults to the package's file name.
  explicit TensorDictModule(const ExportedModel& model, std::vector<NestedKey> in_keys = {},
                            std::vector<NestedKey> out_keys = {}, std::string name = "");

  /// Python's select_out_keys: only these outputs are written (and an entry the data holds at
  /// another out_key, not an in_key, is removed). KeyError for a key that is not an out_key.
  TensorDictModule& select_out_keys(const std::vector<NestedKey>& keys) {
    return select(keys, "TensorDictModule.select_out_keys"), *this;
  }
  /// Undoes select_out_keys: every output is written.
  TensorDictModule& reset_out_keys() { return select({}, ""), *this; }
  /// Python's `inplace`: where forward() writes the outputs (WriteTo::Input by default).
  TensorDictModule& write_to(WriteTo where) { return write_to_ = where, *this; }

  /// The out key that drops its output (Python's "_").
  static constexpr const char* kDropped = "_";

  void run(KeyIO& io) const override;

 protected:
  /// Tells the ModuleFn constructor apart.
  struct Tag {};
  /// A module from its call (what every public constructor builds).
  TensorDictModule(ModuleFn fn, std::vector<NestedKey> in_keys, std::vector<NestedKey> out_keys,
                   std::string name, Tag);

 private:
  template <class F>
  static std::string default_name(const F& module) {
    if constexpr (std::is_base_of_v<torch::detail::ModuleHolderIndicator, F>) {
      return detail::module_name(*module);
    } else {
      return "TensorDictModule";
    }
  }

  ModuleFn fn_;
};

/// Python's TensorDictSequential: runs its modules in order on one TensorDict. in_keys: the keys
/// a module reads that no earlier module writes; out_keys: every key written, in order.
class TensorDictSequential : public TensorDictModuleBase {
 public:
  /// Runs `modules` in order; Error when one is null.
  explicit TensorDictSequential(std::vector<std::shared_ptr<const TensorDictModuleBase>> modules);
  /// Runs copies of `modules` in order: `TensorDictSequential(actor, critic)`.
  template <class... M,
            std::enable_if_t<(std::is_base_of_v<TensorDictModuleBase, M> && ...), int> = 0>
  explicit TensorDictSequential(M... modules)
      : TensorDictSequential(std::vector<std::shared_ptr<const TensorDictModuleBase>>{
            std::make_shared<const M>(std::move(modules))...}) {}

  /// Python's select_out_keys: after a run only these of the out_keys stay in the TensorDict
  /// (the others, intermediate results, are removed). KeyError for a key that is not an out_key.
  TensorDictSequential& select_out_keys(const std::vector<NestedKey>& keys) {
    return select(keys, "TensorDictSequential.select_out_keys"), *this;
  }
  /// Undoes select_out_keys: every out_key stays.
  TensorDictSequential& reset_out_keys() { return select({}, ""), *this; }
  /// The modules, in running order.
  const std::vector<std::shared_ptr<const TensorDictModuleBase>>& modules() const {
    return modules_;
  }

  void run(KeyIO& io) const override;

 private:
  TensorDictSequential(std::pair<std::vector<NestedKey>, std::vector<NestedKey>> keys,
                       const std::vector<std::shared_ptr<const TensorDictModuleBase>>& modules);

  std::vector<std::shared_ptr<const TensorDictModuleBase>> modules_;
};

// ---- templates -------------------------------------------------------------------------------

template <class C, std::enable_if_t<std::is_base_of_v<TensorClassTag, C>, int>>
C TensorDictModuleBase::operator()(C obj) const {
  if (write_to_ != WriteTo::Input) {
    throw ValueError("TensorDictModule '" + name_ +
                     "' writes to a new TensorDict (write_to), not into a tensorclass: call "
                     "forward_as<Out>(obj)");
  }
  detail::TensorClassIO<C> io(obj);
  run(io);
  return obj;
}

template <class Out, class In>
Out TensorDictModuleBase::forward_as(const In& in) const {
  TensorDict td;
  if constexpr (std::is_base_of_v<TensorClassTag, In>) {
    td = in._tensordict().clone(false);
  } else {
    td = in.clone(false);
  }
  forward(td);
  std::vector<NestedKey> fields;
  for (const auto& field : Out::fields()) {
    if (td.contains(field)) fields.emplace_back(field);
  }
  return Out::from_tensordict(td.select(fields));
}

}  // namespace tensordict::nn
