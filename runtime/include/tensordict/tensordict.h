#pragma once
/// \file
/// TensorDict: a dictionary of tensors (and nested TensorDicts and non-tensor data) sharing leading
/// "batch" dimensions, with Python tensordict's names and semantics (docs/runtime.md).
///
/// A TensorDict is a handle, like at::Tensor: copying it aliases the same entries, and a nested
/// TensorDict fetched from its parent writes through to the parent. clone() copies data.
///
/// \code
///   TensorDict td({{"obs", at::zeros({4, 3})}, {"reward", at::zeros({4})}}, {4});
///   td.set({"next", "obs"}, at::ones({4, 3}));   // creates the nested TensorDict "next"
///   at::Tensor obs = td[{"next", "obs"}];         // Python's td["next", "obs"]
///   TensorDict rows = td.index({Slice(0, 2)});    // batch size [2]; views of the leaves
///   TensorDict sums = td.sum(0);                  // every leaf reduced over batch dim 0
///   td += 1;                                      // element-wise math on every leaf
/// \endcode
///
/// Also here: stack(), cat() and the other functions over several TensorDicts. Included with it:
/// Value (one entry, value.h), Operand (the right-hand side of TensorDict math, and the
/// operators; operand.h), ValuesIndices (values_indices.h), the methods' argument types
/// (arguments.h: BatchSize, ReduceDims, MemmapOptions) and memmap_async's result (future.h). Lazy
/// stacks are TensorDicts too (lazy_stack.h). Errors derive from tensordict::Error (errors.h).

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensordict/arguments.h"
#include "tensordict/class_contract.h"
#include "tensordict/errors.h"
#include "tensordict/future.h"
#include "tensordict/index.h"
#include "tensordict/nested_key.h"
#include "tensordict/non_tensor.h"

namespace torch {
namespace nn {
class Module;
}
}  // namespace torch

namespace tensordict {

class ModuleSwap;
class Operand;
class TensorDict;
struct ValuesIndices;
class Value;
struct ClassSpec;
struct StateDict;
namespace detail {
struct TensorDictImpl;
struct Access;
struct Slots;
/// Identifies a generated class: its `class_spec` function (an address, free to compare).
using ClassToken = const ClassSpec& (*)();
}  // namespace detail

/// Python tensordict's TensorDict: entries (tensors, nested TensorDicts, NonTensorData,
/// NonTensorStack) keyed by strings in insertion order, sharing the leading batch dims. A handle:
/// copies alias the same entries, clone() copies the data. A lazy stack (lazy_stack.h, Python's
/// LazyStackedTensorDict) is a TensorDict too; ops it does not support throw TypeError.
class TensorDict {
 public:
  // ---- construction (core/tensordict.cpp) -------------------------------------------------------
  /// An empty TensorDict with no batch dims.
  TensorDict();
  /// Another handle to the same entries (no data is copied).
  ///@{
  TensorDict(const TensorDict&) = default;
  TensorDict(TensorDict&&) noexcept = default;
  ///@}
  /// Assignment rebinds a handle. Assigning to a temporary (`td[i] = other`, which would rebind
  /// the temporary and write nothing) does not compile: Python's `td[i] = other` is
  /// `td.index_put_({i}, other)`.
  ///@{
  TensorDict& operator=(const TensorDict&) & = default;
  TensorDict& operator=(TensorDict&&) & noexcept = default;
  TensorDict& operator=(const TensorDict&) && = delete;
  TensorDict& operator=(TensorDict&&) && = delete;
  ///@}
  /// Drops this handle; the entries live on while another handle refers to them.
  ~TensorDict() = default;
  /// From key/value pairs (a nested key creates the intermediate TensorDicts). Every entry's
  /// leading dims must equal `batch_size` (ShapeError naming the key otherwise). With a `device`,
  /// tensors are moved to it; `names` names the batch dims (Python's `names=`).
  ///@{
  TensorDict(std::initializer_list<std::pair<NestedKey, Value>> items, BatchSize batch_size = {},
             std::optional<at::Device> device = std::nullopt,
             std::optional<DimNames> names = std::nullopt);
  TensorDict(const std::vector<std::pair<NestedKey, Value>>& items, BatchSize batch_size = {},
             std::optional<at::Device> device = std::nullopt,
             std::optional<DimNames> names = std::nullopt);
  ///@}

  // ---- batch size and device (core/tensordict.cpp) ----------------------------------------------
  /// The leading dims every entry shares (Python's `batch_size`).
  const BatchSize& batch_size() const;
  /// Python's shape: the batch size.
  const BatchSize& shape() const { return batch_size(); }
  /// Changes the batch size; every entry must have the new leading dims (ShapeError otherwise).
  void set_batch_size(BatchSize batch_size);
  /// Number of batch dims (Python's `ndim` and `batch_dims`).
  ///@{
  int64_t ndim() const;
  int64_t batch_dims() const { return ndim(); }
  ///@}
  /// Product of the batch dims.
  int64_t numel() const;
  /// True when the TensorDict holds no leaf at any depth (Python's is_empty: nested TensorDicts
  /// that are empty themselves do not count).
  bool is_empty() const;
  /// The device every leaf is on, when one is set (Python's `device`; None otherwise).
  std::optional<at::Device> device() const;
  /// Sets the device and moves every leaf there; std::nullopt only clears it (Python's
  /// clear_device_).
  TensorDict& set_device(std::optional<at::Device> device);
  // ---- dim names (core/dim_names.cpp) -----------------------------------------------------------
  /// Python's `names`: one optional name per batch dim (all unset when the dims are unnamed).
  /// Batch ops move them as Python does (docs/runtime.md, "Dim names").
  DimNames names() const;
  /// Names the batch dims (nullopt or all-unset: unnamed) and the leading dims of every nested
  /// TensorDict. ShapeError on a wrong count, Error when a name is given twice.
  void set_names(std::optional<DimNames> names);
  /// Python's refine_names: names unnamed dims; a named dim must keep its name (Error otherwise).
  /// One "..." entry (Python's `...`) stands for the dims it covers, which keep their names.
  TensorDict& refine_names(const DimNames& names);
  /// Python's rename(*names): a shallow copy (clone(false)) whose dims are named `names`
  /// (nullopt: unnamed). rename_ renames in place and returns this TensorDict.
  ///@{
  TensorDict rename(std::optional<DimNames> names) const;
  TensorDict& rename_(std::optional<DimNames> names);
  ///@}
  /// Python's rename(**rename_map): dims named like a `from` take its `to` (nullopt: unnamed);
  /// Error naming a `from` that names no dim. rename_ renames in place.
  ///@{
  TensorDict rename(const DimRenames& rename_map) const;
  TensorDict& rename_(const DimRenames& rename_map);
  ///@}

  // ---- entries (core/tensordict.cpp) ------------------------------------------------------------
  /// True when `key` (a top-level key or a path) has an entry (Python's `key in td`).
  bool contains(const NestedKey& key) const;
  /// The tensor at `key`; KeyError when missing, TypeError when the entry is not a tensor.
  at::Tensor get(const NestedKey& key) const;
  /// The tensor at `key`, or `default_value` when the key is missing.
  at::Tensor get(const NestedKey& key, const at::Tensor& default_value) const;
  /// The nested TensorDict at `key` (aliasing the parent's).
  TensorDict get_tensordict(const NestedKey& key) const;
  /// The non-tensor value at `key`: NonTensorData's data, or a NonTensorStack's nested list.
  Json get_non_tensor(const NestedKey& key) const;
  /// Python's is_non_tensor: whether the entry at `key` is stored as non-tensor data
  /// (NonTensorData or a NonTensorStack), as a class's typed accessor cannot tell; KeyError when
  /// missing.
  bool is_non_tensor(const NestedKey& key) const;
  /// The entry at `key`, whatever its kind.
  Value get_value(const NestedKey& key) const;
  /// The entry at `key` as a `T`: at::Tensor, TensorDict, Value, Json, or a type the non-tensor
  /// data converts to (std::string, int64_t, double, bool, std::vector<...>); an arithmetic `T`
  /// also reads a one-element tensor (its item), and a generated class a nested TensorDict
  /// (aliasing it; checked as from_tensordict does, and TypeError when it was stored as another
  /// class). TypeError when the entry is not a `T`.
  template <class T>
  T get(const NestedKey& key) const;
  /// Python's td["key"]; td[{"next", "obs"}] is Python's td["next", "obs"]. The tensor at `key`.
  at::Tensor operator[](const NestedKey& key) const { return get(key); }
  /// Entry by position in insertion order (O(1); used by generated tensorclasses).
  const Value& value_at(size_t slot) const;
  /// Key by position in insertion order.
  const std::string& key_at(size_t slot) const;
  /// Position of a top-level key, or -1.
  int64_t slot_of(const std::string& key) const;

  /// Sets an entry; intermediate TensorDicts of a nested key are created. A locked TensorDict
  /// only accepts existing keys, which are written in place.
  TensorDict& set(const NestedKey& key, Value value);
  /// Stores any JSON-like value as NonTensorData (Python's set_non_tensor).
  TensorDict& set_non_tensor(const NestedKey& key, Json value);
  /// In-place copy into the existing tensor at `key` (shapes must match).
  TensorDict& set_(const NestedKey& key, const at::Tensor& value);
  /// Removes `key` (KeyError when missing).
  TensorDict& del_(const NestedKey& key);
  /// Removes and returns the entry at `key`.
  Value pop(const NestedKey& key);
  /// Python's pop(key, default): the entry at `key` removed, or `default_value` when there is
  /// none.
  Value pop(const NestedKey& key, const Value& default_value);
  /// Python's popitem: removes and returns the last top-level entry set (KeyError when there is
  /// none).
  std::pair<NestedKey, Value> popitem();
  /// Python's setdefault: the entry at `key`, set to `default_value` first when there is none.
  Value setdefault(const NestedKey& key, const Value& default_value);
  /// Renames `old_key` to `new_key`, keeping its position. With `safe`, refuses to overwrite.
  TensorDict& rename_key_(const NestedKey& old_key, const NestedKey& new_key, bool safe = false);

  // ---- keys (core/keys.cpp) ---------------------------------------------------------------------
  /// Python's keys, values and items, in insertion order. `include_nested` walks nested
  /// TensorDicts depth first (a nested TensorDict's entries before the TensorDict itself, as
  /// Python); `leaves_only` skips the nested TensorDicts themselves; `sort` orders them by their
  /// dotted names instead (Python's sort=True).
  ///@{
  std::vector<NestedKey> keys(bool include_nested = false, bool leaves_only = false,
                              bool sort = false) const;
  std::vector<Value> values(bool include_nested = false, bool leaves_only = false,
                            bool sort = false) const;
  std::vector<std::pair<NestedKey, Value>> items(bool include_nested = false,
                                                 bool leaves_only = false, bool sort = false) const;
  ///@}
  /// Python's depth: the most levels of nesting above a leaf (0 without nested TensorDicts).
  int64_t depth() const;
  /// Number of top-level entries.
  size_t size() const;

  // ---- lock (core/lock.cpp) ---------------------------------------------------------------------
  /// Locks this TensorDict and its nested TensorDicts: keys can no longer be added, removed or
  /// renamed (LockedError); in-place writes still work.
  TensorDict& lock_();
  /// Unlocks this TensorDict and its nested TensorDicts; returns it.
  TensorDict& unlock_();
  /// True when locked (lock_, memmap, a frozen tensorclass).
  bool is_locked() const;

  // ---- views and copies (ops/views.cpp) ---------------------------------------------------------
  /// A new TensorDict (sharing tensors) with only `keys`; strict: missing keys throw.
  TensorDict select(const std::vector<NestedKey>& keys, bool strict = true) const;
  /// A new TensorDict (sharing tensors) without `keys`.
  TensorDict exclude(const std::vector<NestedKey>& keys) const;
  /// Deep copy of the data (recurse=false copies the structure only and shares the tensors).
  TensorDict clone(bool recurse = true) const;
  /// Same batch size and device, no entries; recurse keeps the nested TensorDicts (empty).
  TensorDict empty(bool recurse = false) const;
  /// A TensorDict whose leaves are `keys`, each a copy of `value` (Python's fromkeys; a number
  /// becomes a 0-dim tensor, as Python's fromkeys(keys, 0)).
  static TensorDict fromkeys(const std::vector<NestedKey>& keys, const Value& value,
                             BatchSize batch_size = {});

  // ---- dicts (ops/dict.cpp) ---------------------------------------------------------------------
  /// Python's to_dict(retain_none, convert_tensors=True): the entries as a JSON object, tensors as
  /// nested lists (tolist()), nested TensorDicts as objects, non-tensor data as itself, a
  /// NonTensorStack as its nested list; the None fields of a tensorclass instance (this one or a
  /// nested one) as null after its entries, unless `retain_none` is false.
  Json to_dict(bool retain_none = true) const;
  /// Python's from_dict: a TensorDict of a JSON object. Objects become nested TensorDicts,
  /// numbers and lists of them tensors (as torch.tensor), other lists NonTensorStacks, the rest
  /// NonTensorData. The batch size is `batch_size`, else with `auto_batch_size` (implied by
  /// `batch_dims`) the largest the leaves share (at most `batch_dims` dims), else empty, as
  /// Python 0.14. ValueError when both `batch_size` and `batch_dims` are given.
  static TensorDict from_dict(const Json& dict, std::optional<BatchSize> batch_size = std::nullopt,
                              std::optional<at::Device> device = std::nullopt,
                              std::optional<int64_t> batch_dims = std::nullopt,
                              std::optional<bool> auto_batch_size = std::nullopt);
  /// Python's from_list: the TensorDicts from_dict makes of the objects of `items` (a JSON
  /// list), stacked along dim 0: with maybe_dense_stack (a lazy stack when their structures
  /// differ) unless `lazy` says lazy_stack (true) or stack (false). `batch_size`, when given,
  /// starts with the list's length (ValueError otherwise) and the rest is each item's; so
  /// `batch_dims` counts the stacked dim. TypeError when `items` is not a list of objects.
  static TensorDict from_list(const Json& items, std::optional<BatchSize> batch_size = std::nullopt,
                              std::optional<at::Device> device = std::nullopt,
                              std::optional<int64_t> batch_dims = std::nullopt,
                              std::optional<bool> auto_batch_size = std::nullopt,
                              std::optional<bool> lazy = std::nullopt);

  // ---- update and key edits (ops/update.cpp) ----------------------------------------------------
  /// Sets every entry of `other` (nested keys merged).
  TensorDict& update(const TensorDict& other);
  /// update of `keys_to_update` only (Python's keys_to_update=): the entries of `other` at those
  /// keys, or below them.
  TensorDict& update(const TensorDict& other, const std::vector<NestedKey>& keys_to_update);
  /// In-place copy of every entry of `other`; its keys must exist here.
  TensorDict& update_(const TensorDict& other);
  /// update_ of `keys_to_update` only (the entries of `other` at those keys, or below them).
  TensorDict& update_(const TensorDict& other, const std::vector<NestedKey>& keys_to_update);
  /// Python's flatten_keys / unflatten_keys: the leaves of nested TensorDicts as top-level keys
  /// joined by `separator` ("a.b"), and back. KeyError when a key would collide with another.
  ///@{
  TensorDict flatten_keys(const std::string& separator = ".") const;
  TensorDict unflatten_keys(const std::string& separator = ".") const;
  ///@}
  /// flatten_keys and unflatten_keys in place (Python's inplace=True); LockedError when locked.
  ///@{
  TensorDict& flatten_keys_(const std::string& separator = ".");
  TensorDict& unflatten_keys_(const std::string& separator = ".");
  ///@}
  /// Python's cat_tensors / stack_tensors: the tensors at `keys` concatenated or stacked along
  /// leaf dim `dim` (negative from the last) into `out_key`; the sources are removed unless
  /// `keep_entries`.
  ///@{
  TensorDict& cat_tensors(const std::vector<NestedKey>& keys, const NestedKey& out_key,
                          int64_t dim = 0, bool keep_entries = false);
  TensorDict& stack_tensors(const std::vector<NestedKey>& keys, const NestedKey& out_key,
                            int64_t dim = 0, bool keep_entries = false);
  ///@}
  /// select and exclude in place (Python's inplace=True); LockedError when locked.
  ///@{
  TensorDict& select_(const std::vector<NestedKey>& keys, bool strict = true);
  TensorDict& exclude_(const std::vector<NestedKey>& keys);
  ///@}
  /// Python's clear: every entry removed (LockedError when locked).
  TensorDict& clear();
  /// Python's create_nested: an empty TensorDict with this one's batch size, device and names at
  /// `key`, intermediate TensorDicts created (LockedError when locked).
  TensorDict& create_nested(const NestedKey& key);

  // ---- comparison (ops/compare.cpp) -------------------------------------------------------------
  /// Element-wise equality / inequality over every leaf: a TensorDict of bool tensors with the
  /// same structure. KeyError naming a key that only one side has.
  ///@{
  TensorDict operator==(const TensorDict& other) const;
  TensorDict operator!=(const TensorDict& other) const;
  ///@}
  /// Every tensor leaf compared with `other`: a TensorDict of bool tensors.
  TensorDict operator==(const at::Scalar& other) const;
  /// True when every leaf is all-true / any leaf has a true element.
  ///@{
  bool all() const;
  bool any() const;
  ///@}
  /// True when both handles refer to the same storage of entries.
  bool is_same(const TensorDict& other) const { return impl_ == other.impl_; }

  // ---- indexing (ops/index.cpp) -----------------------------------------------------------------
  /// Python's td[index]: every entry indexed over the batch dims (int, Slice, Ellipsis, None,
  /// bool mask, long tensor; index.h); views wherever torch gives views.
  TensorDict index(const Index& index) const;
  /// Python's td[i]: row `i` of batch dim 0 (`index({i})`), a view.
  TensorDict operator[](int64_t i) const;
  // Defined here, not after the class: C++20's ranges concepts probe begin()/end() while the
  // class is being defined (through c10 headers), and an incomplete iterator then is an error.
  /// Iterates the rows of batch dim 0 (TensorDict::begin / end); each row is `td[i]`, a view.
  class RowIterator {
   public:
    /// An input iterator whose rows are TensorDicts, returned by value.
    ///@{
    using iterator_category = std::input_iterator_tag;
    using value_type = TensorDict;
    using difference_type = int64_t;
    using pointer = void;
    using reference = TensorDict;
    ///@}

    /// At row `row` of `td`, which must outlive the iterator.
    RowIterator(const TensorDict& td, int64_t row) : td_(&td), row_(row) {}
    /// The current row, `td[row]`.
    TensorDict operator*() const { return (*td_)[row_]; }
    /// Moves to the next row.
    RowIterator& operator++() { return ++row_, *this; }
    /// Compares the row positions (of iterators over the same TensorDict).
    ///@{
    friend bool operator==(const RowIterator& a, const RowIterator& b) { return a.row_ == b.row_; }
    friend bool operator!=(const RowIterator& a, const RowIterator& b) { return a.row_ != b.row_; }
    ///@}

   private:
    const TensorDict* td_;
    int64_t row_;
  };
  /// Python's `for row in td`: iterates the rows td[0], td[1], ... of batch dim 0 (ShapeError
  /// when there are no batch dims).
  ///@{
  RowIterator begin() const;
  RowIterator end() const;
  ///@}

  // ---- writes at an index (ops/index_put.cpp) ---------------------------------------------------
  /// Writes `value` at `index` in place; keys missing here are preallocated (lazy preallocation).
  TensorDict& index_put_(const Index& index, const TensorDict& value);
  /// Python's `td[index] = value` of a tensor or a number: written at `index` of every tensor
  /// leaf, broadcast and cast to it as set_at_ does.
  ///@{
  TensorDict& index_put_(const Index& index, const at::Tensor& value);
  TensorDict& index_put_(const Index& index, const at::Scalar& value);
  ///@}
  /// Python's update_at_: every entry of `other` written in place at `index` of this
  /// TensorDict's entry (KeyError when this TensorDict lacks one).
  TensorDict& update_at_(const TensorDict& other, const Index& index);
  /// Python's set_at_: `value` written in place at `index` of the tensor at `key`, broadcast to
  /// the indexed part as `tensor[index] = value` broadcasts (ShapeError naming the key otherwise).
  TensorDict& set_at_(const NestedKey& key, const at::Tensor& value, const Index& index);
  /// Python's get_at: the tensor at `key` indexed by `index` over the batch dims (KeyError when
  /// missing; with `default_value`, that tensor instead).
  ///@{
  at::Tensor get_at(const NestedKey& key, const Index& index) const;
  at::Tensor get_at(const NestedKey& key, const Index& index,
                    const at::Tensor& default_value) const;
  ///@}
  /// Python's copy_at_ (its default, non-fast path): update_at_.
  TensorDict& copy_at_(const TensorDict& other, const Index& index);

  // The ops' members, in files of their own under tensordict/members/, each section still under
  // its banner naming the file that defines its members (tests/layers/check_header_map.cmake).
  // In this order (clang-format would sort the lines):
  // clang-format off
#include "tensordict/members/shape.inc"
#include "tensordict/members/leaves.inc"
#include "tensordict/members/math.inc"
#include "tensordict/members/io.inc"
  // clang-format on

  // ---- lazy stacks (core/lazy_state.cpp) --------------------------------------------------------
  // Made by lazy_stack() (tensordict/lazy_stack.h).
  /// True for a LazyStackedTensorDict: a TensorDict that holds element TensorDicts stacked along
  /// stack_dim() instead of entries. Ops on it follow Python's LazyStackedTensorDict; an op it
  /// does not support throws TypeError naming the op.
  bool is_lazy_stack() const;
  /// The elements of a lazy stack (handles aliasing them); TypeError on a dense TensorDict.
  const std::vector<TensorDict>& tensordicts() const;
  /// The batch dim along which a lazy stack stacks its elements; TypeError on a dense TensorDict.
  int64_t stack_dim() const;
  // ---- lazy stacks: their elements (lazy/stack.cpp) ---------------------------------------------
  /// Python's to_lazystack: a lazy stack of the rows along batch dim `dim` (names kept).
  TensorDict to_lazystack(int64_t dim = 0) const;
  /// Python's LazyStackedTensorDict.append / insert: `td` added as an element at the end / at
  /// `index`. TypeError on a dense TensorDict, LockedError when locked, ShapeError when its batch
  /// size is not the elements'.
  ///@{
  TensorDict& append(const TensorDict& td);
  TensorDict& insert(int64_t index, const TensorDict& td);
  ///@}

  // ---- lazy stacks: dense reads (lazy/ops.cpp) --------------------------------------------------
  /// A dense TensorDict with the same content, lazy stacks at every level stacked (ShapeError
  /// naming the key when shapes differ). A dense TensorDict without lazy stacks returns itself.
  TensorDict densify() const;
  /// The tensor at `key` with every element of the lazy stacks on its path padded (at the end of
  /// each dim) to the largest shape with `padding_value`: Python's get(key, as_padded_tensor=True).
  at::Tensor get_padded(const NestedKey& key, double padding_value = 0) const;
  /// Python's get(key, as_list=True): the tensors at `key` of the elements of the lazy stack on
  /// its path, each with its own shape; without a lazy stack, the rows of get(key) along dim 0
  /// (Python gives that tensor, which iterates over them). IndexError without batch dims.
  std::vector<at::Tensor> get_list(const NestedKey& key) const;
  /// Python's get(key, as_nested_tensor=True): get_list's tensors as one nested tensor (the
  /// strided nested layout every supported libtorch has; Python's recent releases give the
  /// jagged one), `is_nested()`.
  at::Tensor get_nested_tensor(const NestedKey& key) const;

  // ---- nn modules (ops/module.cpp) --------------------------------------------------------------
  // Include tensordict/module.h to call these.
  // ---------------------
  /// The parameters and buffers of `module` as a TensorDict following the module tree: each
  /// module's own parameters, then its buffers, then one nested TensorDict per child with any
  /// (keys "0", "weight", as Python nests state_dict keys). Leaves alias the module's tensors.
  /// `as_module`: the result is locked, as Python's TensorDictParams.
  static TensorDict from_module(const torch::nn::Module& module, bool as_module = false);
  /// A holder's module (torch::nn::Sequential, torch::nn::Linear, ...), as Python passes modules.
  template <class Holder, class = typename Holder::ContainedType>
  static TensorDict from_module(const Holder& module, bool as_module = false) {
    return from_module(static_cast<const torch::nn::Module&>(*module.ptr()), as_module);
  }
  /// Puts this TensorDict's tensors into `module` (the module's tensors then share their storage;
  /// `inplace`: copied into the module's own storage instead) and returns the tensors it had
  /// (`return_swap` = false: an empty TensorDict, which saves a copy when `inplace`).
  /// KeyError for a key the module lacks; ShapeError/TypeError for a shape or dtype that differs.
  ///@{
  TensorDict to_module(torch::nn::Module& module, bool inplace = false,
                       bool return_swap = true) const;
  template <class Holder, class = typename Holder::ContainedType>
  TensorDict to_module(const Holder& module, bool inplace = false, bool return_swap = true) const {
    return to_module(static_cast<torch::nn::Module&>(*module.ptr()), inplace, return_swap);
  }
  ///@}
  /// to_module until the returned guard is destroyed, which puts the original tensors back
  /// (Python's `with params.to_module(module):`). Takes a module or a holder's module.
  ///@{
  ModuleSwap to_module_scoped(torch::nn::Module& module) const;
  template <class Holder, class = typename Holder::ContainedType>
  ModuleSwap to_module_scoped(const Holder& module) const;  // defined in module.h
  ///@}

  // ---- state dict (tensorclass/state.cpp) -------------------------------------------------------
  // Python's state_dict (spec §6.1, §6.3); StateDict is tensordict/state_dict.h.
  /// Python's state_dict(prefix=, keep_vars=, flatten=): dotted keys -> tensors (detached unless
  /// `keep_vars`), `metadata[level]` = {"batch_size", "device"}; `flatten = false` keeps each
  /// nested level as its own StateDict.
  StateDict state_dict(const StateDictOptions& options = {}) const;
  /// Loads a state dict, flat or nested (`from_flatten`: which; unset, either): batch size from
  /// its root metadata, tensors copied in place (`assign`: replaced). `strict`: the key sets
  /// must match (KeyError listing the differences).
  TensorDict& load_state_dict(const StateDict& state, bool strict = true, bool assign = false,
                              std::optional<bool> from_flatten = std::nullopt);

  /// Generated accessors' fast path: the entry in `slot` when the keys are known to be the fields
  /// of `cls` in schema order (recorded by the accessors' slow path, forgotten on any change of
  /// the keys), else nullptr.
  const Value* class_slot(detail::ClassToken cls, size_t slot) const noexcept;

 private:
  // Internal state shared by handles. Only the runtime's own sources reach it, through
  // detail::Access (defined in runtime/src, where TensorDictImpl is).
  friend struct detail::Access;
  detail::TensorDictImpl& impl() const { return *impl_; }
  explicit TensorDict(std::shared_ptr<detail::TensorDictImpl> impl);

  // map's work: the results of `fn` per chunk, in order; and their concatenation (or stack).
  std::vector<TensorDict> run_chunks(const std::function<TensorDict(const TensorDict&)>& fn,
                                     int num_workers, int64_t chunksize, bool pbar) const;
  static TensorDict combine_chunks(const std::vector<TensorDict>& results, int64_t chunksize);

  std::shared_ptr<detail::TensorDictImpl> impl_;
  detail::Slots* slots_;  // impl_'s base, readable inline where TensorDictImpl is incomplete
};

}  // namespace tensordict

// The types TensorDict's members take and return that hold TensorDicts by value.
#include "tensordict/operand.h"
#include "tensordict/value.h"
#include "tensordict/values_indices.h"

namespace tensordict {

/// Stacks along a new batch dim `dim`; nested and non-tensor entries included. Equal
/// NonTensorData stay NonTensorData; differing ones become a NonTensorStack.
TensorDict stack(const std::vector<TensorDict>& tds, int64_t dim = 0);
/// Concatenates along the existing batch dim `dim`.
TensorDict cat(const std::vector<TensorDict>& tds, int64_t dim = 0);
/// Python's pad_sequence: the TensorDicts (same leaf keys) stacked along a new dim 0, each tensor
/// leaf padded with `padding_value` along its dim `pad_dim` to the longest (a batch dim: the
/// batch grows to it). `masks_key`, when given, adds under it a bool leaf per key, true where
/// the values are not padding (Python's return_mask; its True is the key "masks"). Non-tensor
/// entries become NonTensorStacks.
TensorDict pad_sequence(const std::vector<TensorDict>& tds, int64_t pad_dim = 0,
                        double padding_value = 0,
                        const std::optional<NestedKey>& masks_key = std::nullopt);
/// Python's merge_tensordicts: every key of `tds` (at least two), from the first TensorDict that
/// holds it; a key every TensorDict holds goes through `merge` when given (Python's
/// callback_exist), or through the function given for it.
///@{
TensorDict merge_tensordicts(const std::vector<TensorDict>& tds, const MergeFn& merge = {});
TensorDict merge_tensordicts(const std::vector<TensorDict>& tds,
                             const std::vector<std::pair<NestedKey, MergeFn>>& merge_by_key);
///@}
/// Python's stack(..., out=) and cat(..., out=): each result copied into `out`'s tensor where
/// shape and dtype allow (Python keeps out's storage), else set; returns `out`.
///@{
TensorDict& stack_out(TensorDict& out, const std::vector<TensorDict>& tds, int64_t dim = 0);
TensorDict& cat_out(TensorDict& out, const std::vector<TensorDict>& tds, int64_t dim = 0);
///@}

/// Python's repr layout (fields sorted, shape, device, dtype, is_shared; nested indented), of a
/// TensorDict or of one entry.
///@{
std::ostream& operator<<(std::ostream& os, const TensorDict& td);
std::ostream& operator<<(std::ostream& os, const Value& value);
///@}

/// "[2, 3]" spelling of a shape, for messages.
std::string shape_str(at::IntArrayRef shape);

}  // namespace tensordict
