#pragma once
/// \file
/// The contract between tcgen and the runtime: every fact that generated code and the
/// TensorClass<Derived> base must agree on, written once. It is torch-free, so tcgen (which does
/// not link libtorch) includes it too; generated headers reach it through tensorclass.h.

#include <array>
#include <cstddef>
#include <string_view>

/// Version of the generated-code ABI: generated headers static_assert it, so a header made by
/// another tcgen fails to compile with a clear message instead of misbehaving.
#define TENSORDICT_ABI_VERSION 2

namespace tensordict {

/// TENSORDICT_ABI_VERSION as a C++ constant.
inline constexpr int kAbiVersion = TENSORDICT_ABI_VERSION;

/// What a field holds (the schema type with `optional[...]` removed).
enum class FieldKind { Tensor, Str, Int, Float, Bool, Any, List, Class, TensorDict };

/// A FieldKind's spellings: in schemas (and in messages; a class-typed field is written with the
/// class's name, "class" in messages) and as the enumerator generated code names.
struct FieldKindSpelling {
  /// The kind spelled.
  FieldKind kind;
  /// Its schema spelling: "tensor", "str", "int", ...
  std::string_view schema;
  /// Its enumerator's name: "Tensor", "Str", "Int", ...
  std::string_view enumerator;
};

/// Every FieldKind, in enumerator order: the one table tcgen's parser and emitters and the
/// runtime's messages read.
inline constexpr std::array<FieldKindSpelling, 9> kFieldKinds{{
    {FieldKind::Tensor, "tensor", "Tensor"},
    {FieldKind::Str, "str", "Str"},
    {FieldKind::Int, "int", "Int"},
    {FieldKind::Float, "float", "Float"},
    {FieldKind::Bool, "bool", "Bool"},
    {FieldKind::Any, "any", "Any"},
    {FieldKind::List, "list", "List"},
    {FieldKind::Class, "class", "Class"},
    {FieldKind::TensorDict, "TensorDict", "TensorDict"},
}};

/// The spellings of `kind` (its entry of kFieldKinds).
constexpr const FieldKindSpelling& spelling(FieldKind kind) {
  return kFieldKinds[static_cast<std::size_t>(kind)];
}

namespace detail {
constexpr bool field_kinds_in_order() {
  for (std::size_t i = 0; i < kFieldKinds.size(); ++i) {
    if (static_cast<std::size_t>(kFieldKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(field_kinds_in_order(), "kFieldKinds must list FieldKind in enumerator order");
}  // namespace detail

/// The options of Python's `@tensorclass` (format spec §7). Enumerators are spelled as the options
/// are written in schemas; each has its row in kClassOptions and its flag in ClassOptions.
enum class ClassOption { frozen, autocast, nocast, tensor_only, shadow };

/// A set of ClassOptions. Generated code names what it sets:
/// `ClassOptions().with(ClassOption::nocast)`; the runtime reads the flags by name. What each
/// option means is in its kClassOptions row.
struct ClassOptions {
  bool frozen = false;       ///< ClassOption::frozen
  bool autocast = false;     ///< ClassOption::autocast
  bool nocast = false;       ///< ClassOption::nocast
  bool tensor_only = false;  ///< ClassOption::tensor_only
  bool shadow = false;       ///< ClassOption::shadow

  /// A copy with `option` set.
  constexpr ClassOptions with(ClassOption option) const;
  /// Whether `option` is set.
  constexpr bool has(ClassOption option) const;
};

/// What changing an option between two versions of a schema breaks (`tcgen compat`).
enum class OptionChange {
  Safe,       ///< nothing: what the option allows is checked by tcgen
  ApiAdded,   ///< the C++ and Python APIs when it is added (frozen drops setters); removing is safe
  BreaksAll,  ///< the data and both APIs: how values are stored and what setters take
};

/// One class option: the one place that names it. tcgen's parser, checks (exclusions, with their
/// messages), `tcgen compat`, and its C++, Python and YAML emitters read the rows.
struct ClassOptionRow {
  /// The option.
  ClassOption option;
  /// Its schema spelling: `options: [frozen]`, `TC_CLASS("options=frozen")`.
  std::string_view name;
  /// Its flag in ClassOptions.
  bool ClassOptions::*flag;
  /// The options it cannot be combined with (bits of `1u << ClassOption`). Listed on both rows,
  /// a pair "excludes each other"; on one row only, that row's option "excludes" the other.
  unsigned excludes;
  /// The keyword that sets it on Python's TensorClass: `class C(TensorClass, frozen=True)`.
  std::string_view python_keyword;
  /// What changing it between schema versions breaks.
  OptionChange change;
  /// What it does.
  std::string_view doc;
};

/// The bit of `option` in ClassOptionRow::excludes.
constexpr unsigned option_bit(ClassOption option) { return 1u << static_cast<unsigned>(option); }

/// Every class option, in enumerator order.
inline constexpr std::array<ClassOptionRow, 5> kClassOptions{{
    {ClassOption::frozen, "frozen", &ClassOptions::frozen, 0, "frozen", OptionChange::ApiAdded,
     "No setters; instances are locked (in-place tensor updates still work)."},
    {ClassOption::autocast, "autocast", &ClassOptions::autocast, option_bit(ClassOption::nocast),
     "autocast", OptionChange::BreaksAll, "Values are converted to the declared field type."},
    {ClassOption::nocast, "nocast", &ClassOptions::nocast, option_bit(ClassOption::autocast),
     "nocast", OptionChange::BreaksAll,
     "Values are stored as given (numbers and strings as non-tensor data)."},
    {ClassOption::tensor_only, "tensor_only", &ClassOptions::tensor_only,
     option_bit(ClassOption::autocast) | option_bit(ClassOption::nocast), "tensor_only",
     OptionChange::BreaksAll, "Only tensor and class fields."},
    {ClassOption::shadow, "shadow", &ClassOptions::shadow, 0, "shadow", OptionChange::Safe,
     "Field names that TensorDict reserves are allowed (their accessors are `field_<name>`)."},
}};

/// The row of `option`.
constexpr const ClassOptionRow& option_row(ClassOption option) {
  return kClassOptions[static_cast<std::size_t>(option)];
}

constexpr ClassOptions ClassOptions::with(ClassOption option) const {
  ClassOptions out = *this;
  out.*option_row(option).flag = true;
  return out;
}
constexpr bool ClassOptions::has(ClassOption option) const {
  return this->*option_row(option).flag;
}

namespace detail {
constexpr bool class_options_in_order() {
  for (std::size_t i = 0; i < kClassOptions.size(); ++i) {
    if (static_cast<std::size_t>(kClassOptions[i].option) != i) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (kClassOptions[j].flag == kClassOptions[i].flag) return false;
    }
  }
  return true;
}
static_assert(class_options_in_order(),
              "kClassOptions must list ClassOption in enumerator order, each with its own flag");
// A flag without a row would never be set: one bool per row.
static_assert(sizeof(ClassOptions) == kClassOptions.size() * sizeof(bool),
              "every ClassOptions flag needs its kClassOptions row");
}  // namespace detail

/// A dtype as Python names it ("float32"; on disk "torch.float32") and as its at::ScalarType
/// enumerator is spelled ("Float"). `in_schemas`: a schema's `tensor[...]` may name it.
struct DtypeSpelling {
  /// Python's name: "float32".
  std::string_view name;
  /// The at::ScalarType enumerator: "Float".
  std::string_view scalar_type;
  /// Whether a schema's `tensor[...]` may name it.
  bool in_schemas;
};

/// The dtypes the runtime and tcgen name: the one table behind dtype_name, dtype_from_name and
/// the dtypes of schemas' `tensor[...]`.
inline constexpr std::array<DtypeSpelling, 15> kDtypes{{
    {"bool", "Bool", true},
    {"uint8", "Byte", true},
    {"int8", "Char", true},
    {"int16", "Short", true},
    {"int32", "Int", true},
    {"int64", "Long", true},
    {"float16", "Half", true},
    {"bfloat16", "BFloat16", true},
    {"float32", "Float", true},
    {"float64", "Double", true},
    {"complex32", "ComplexHalf", false},
    {"complex64", "ComplexFloat", true},
    {"complex128", "ComplexDouble", true},
    {"qint8", "QInt8", false},
    {"quint8", "QUInt8", false},
}};

/// The public and protected members TensorClass<Derived> (tensorclass.h) declares itself; with
/// TensorDict's (detail::kTensorDictMembers, which a class inherits) the names no field accessor
/// or setter may take without hiding one, so tcgen names that field's accessor `field_<name>`.
/// tests/contract checks this list against the class itself.
// clang-format off
inline constexpr std::array<std::string_view, 41> kTensorClassMembers{
    "TensorClass", "_tensordict", "any_field", "as_field", "build", "cat", "dumps", "field_entry",
    "fields", "from_dict", "from_list", "from_tensordict", "get", "lazy_stack", "load", "load_",
    "load_memmap", "load_memmap_", "load_state_dict", "maybe_dense_stack", "memmap", "memmap_",
    "memmap_async", "memmap_like", "memmap_refresh_", "nested_field", "optional_nested_field",
    "optional_tensor_field", "optional_value_field", "rebind", "required_entry", "save", "set",
    "set_field", "spec", "stack", "state_dict", "tensor_field", "to_tensordict", "value_field",
    "wrap"};
// clang-format on

/// A TensorDict member a generated class inherits as it is, though it gives back a TensorDict
/// (every other such member gives back the class: runtime/cmake/ClassMembers.cmake, which reads
/// this table).
struct KeptMember {
  std::string_view name;  ///< the member's name in TensorDict
  std::string_view why;   ///< why a class gives back a TensorDict there
};
/// The members kept as TensorDict's on generated classes (docs/schema.md, "The generated class").
inline constexpr std::array<KeptMember, 3> kMembersKeptAsTensorDict{{
    {"get_tensordict", "the TensorDict stored at a key, not this one transformed"},
    {"data_ptr", "a TensorDict of pointers; Python's tensorclass does not wrap it"},
    {"cat_tensors", "Python's tensorclass returns its TensorDict, unwrapped"},
}};

/// Names a generated class declares itself; no field may take them (tcgen rejects them).
inline constexpr std::array<std::string_view, 4> kGeneratedMembers{
    "Args", "class_spec", "class_registration", "field_values"};

/// The file beside a tensorclass directory's meta.json that names the version of the class's
/// schema, `{"version": 3}`: written by saves of versioned classes, read by their loads and by
/// `tcgen import` (Python reads only meta.json, other.pickle and _tensordict/ there).
inline constexpr const char* kSchemaVersionFile = "schema.json";

/// Prefix of the accessor of a field whose name is reserved (`field_<name>()`, `set_field_<name>`).
inline constexpr std::string_view kReservedFieldPrefix = "field_";

/// The newest version of Python tensordict's on-disk format that the runtime and `tcgen import`
/// read, and the one saves write unless asked for version 0 (MemmapOptions::format_version).
/// Version 0 is the format of tensordict 0.15.2 and older, whose meta.json files record no
/// version; version 1 has the same layout and adds the three entries below to the meta.json of
/// each saved tensordict (not to a tensorclass's). docs/format.md, "Format versions".
inline constexpr int kFormatVersion = 1;
/// The meta.json entry holding the format version (an integer; absent in version 0).
inline constexpr const char* kFormatVersionKey = "_format_version";
/// The meta.json entry naming the saved tensordict's class ("TensorDict", ...), from version 1.
inline constexpr const char* kClassKey = "_class";
/// The meta.json entry holding the dim names of a tensordict with dim names, from version 1.
inline constexpr const char* kNamesKey = "_names";

}  // namespace tensordict
