#pragma once
// What the importers (`tcgen import` of directories, AOTInductor packages and safetensors files)
// share: how they build, merge and name types, batch dims and classes of keys.

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"
#include "tensordict/nested_key.h"

namespace tcgen {

/// Names of `rank` batch dims: N; B, N; B0, B1, B2, ...
std::vector<std::string> batch_dim_names(size_t rank);

/// A type of `kind` with nothing else set.
Type make_type(TypeKind kind);
/// `kind[element]`: optional[...] or list[...].
Type wrap(TypeKind kind, Type element);

/// True when `a` and `b` spell the same schema type.
bool same_type(const Type& a, const Type& b);
/// The type covering both (a class met twice, an element of a lazy stack): tensors keep the
/// dtype and shape they agree on, anything else that differs is `any`.
Type merge_types(const Type& a, const Type& b);

/// `policy_net` -> `PolicyNet`: the words of `text` (split at what is not a letter or digit),
/// each capitalized; "Model" in front of what would not start with a letter.
std::string pascal_case(const std::string& text);

/// Tensors by nested key, merged into a tree whose levels become classes: the keys in the order
/// met, each a tensor or a nested level (a class named after its path).
class KeyTree {
 public:
  /// `display` names the source in diagnostics.
  KeyTree(std::string display, Diagnostics& diagnostics);

  /// Adds the tensor at `key`, `input` when the model reads it (an output met again as an input
  /// is the same field); a key that is both a tensor and a level is an error.
  void add(const tensordict::NestedKey& key, const Type& type, bool input);
  /// The classes: `name` for the top level first, then each nested level's, named after its
  /// path. Fields only written (never `input`) are optional.
  std::vector<Class> classes(const std::string& name, const std::vector<std::string>& batch_dims);

 private:
  struct Entry {
    std::string key;
    std::optional<Type> tensor;  // unset for a nested level
    bool input = false;
    size_t child = 0;  // nested levels: index into levels_
  };
  struct Level {
    std::vector<Entry> entries;
    std::unordered_map<std::string, size_t> position;  // of each key in entries: finds stay O(1)
    Entry* find(const std::string& key);
    Entry& append(Entry entry);
  };
  void emit(size_t level, const std::string& name, const std::vector<std::string>& batch_dims,
            std::vector<Class>& out);

  std::string display_;
  Diagnostics& diagnostics_;
  std::vector<Level> levels_;  // the top level first
};

}  // namespace tcgen
