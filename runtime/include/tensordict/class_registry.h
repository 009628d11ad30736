#pragma once
/// \file
/// The registry of generated classes, by `_type`: which class a TensorDict is stored as, which
/// class a saved directory holds, and loading one as the class it names (docs/runtime.md,
/// "The class registry"). Every generated class registers itself in each program that includes
/// its header (its `class_registration` member).
///
/// \code
///   tensordict::LoadedClass loaded = tensordict::load_registered("data/item");
///   if (loaded.is<example::MyData>()) {
///     example::MyData item = loaded.as<example::MyData>();
///   }
/// \endcode

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/class_spec.h"
#include "tensordict/errors.h"
#include "tensordict/tensordict.h"

namespace tensordict {

/// Registers the class whose spec `spec` gives, by its `_type` (idempotent; the first class
/// registered under a `_type` keeps it). Returns true, for the generated static member.
bool register_class(const ClassSpec& (*spec)());
/// The registered class whose `_type` is `python_type` ("<class 'module.Name'>"), or nullptr.
const ClassSpec* find_class(std::string_view python_type);
/// Every registered class, by `_type`.
std::vector<const ClassSpec*> registered_classes();

/// The class `td` is an instance of, or stored as: set by the class's constructor, its
/// from_tensordict, its ops and loads (a directory's `_type`), and kept by TensorDict ops on it or
/// on a TensorDict holding it. nullptr for a plain TensorDict or a class not registered here.
const ClassSpec* class_of(const TensorDict& td);
/// The `_type` of the tensorclass saved at `prefix` (a directory or a `.tdz` archive), or nullopt
/// when it holds something else (a TensorDict, a lazy stack, non-tensor data).
std::optional<std::string> saved_type(const std::string& prefix);

/// A saved tensorclass loaded as the registered class its `_type` names.
struct LoadedClass {
  /// The class (never null).
  const ClassSpec* spec = nullptr;
  /// Its TensorDict, checked and evolved as `C::load_memmap` would.
  TensorDict td;

  /// Whether the class is `C`.
  template <class C>
  bool is() const {
    return spec == &C::class_spec();
  }
  /// The instance as a `C`; TypeError when the class is another.
  template <class C>
  C as() const {
    if (!is<C>()) {
      throw TypeError(std::string("the loaded instance is of class ") + spec->name + " (" +
                      spec->python_type + "), not " + C::class_spec().name);
    }
    return C::from_tensordict(td, {}, false);
  }
};

/// Loads the tensorclass saved at `prefix` as the registered class its `_type` names. FormatError
/// when it holds no tensorclass, KeyError naming the `_type` when no class here registered it.
LoadedClass load_registered(const std::string& prefix,
                            std::optional<at::Device> device = std::nullopt);

}  // namespace tensordict
