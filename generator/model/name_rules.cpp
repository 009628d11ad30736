// Which names are taken: C++ keywords, macros in scope where a generated header compiles, names
// TensorDict and the generated code reserve, dtypes. Declared in name_rules.h.
#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string>
#include <string_view>

#include "model/name_rules.h"

#include <sstream>

#include "tensordict/class_contract.h"
#include "tensordict/detail/tensordict_members.h"

namespace tcgen {
namespace {

const std::set<std::string>& cpp_keywords() {
  static const std::set<std::string> words = {"alignas",       "alignof",     "and",
                                              "and_eq",        "asm",         "auto",
                                              "bitand",        "bitor",       "bool",
                                              "break",         "case",        "catch",
                                              "char",          "char8_t",     "char16_t",
                                              "char32_t",      "class",       "compl",
                                              "concept",       "const",       "consteval",
                                              "constexpr",     "constinit",   "const_cast",
                                              "continue",      "co_await",    "co_return",
                                              "co_yield",      "decltype",    "default",
                                              "delete",        "do",          "double",
                                              "dynamic_cast",  "else",        "enum",
                                              "explicit",      "export",      "extern",
                                              "false",         "float",       "for",
                                              "friend",        "goto",        "if",
                                              "inline",        "int",         "long",
                                              "mutable",       "namespace",   "new",
                                              "noexcept",      "not",         "not_eq",
                                              "nullptr",       "operator",    "or",
                                              "or_eq",         "private",     "protected",
                                              "public",        "register",    "reinterpret_cast",
                                              "requires",      "return",      "short",
                                              "signed",        "sizeof",      "static",
                                              "static_assert", "static_cast", "struct",
                                              "switch",        "template",    "this",
                                              "thread_local",  "throw",       "true",
                                              "try",           "typedef",     "typeid",
                                              "typename",      "union",       "unsigned",
                                              "using",         "virtual",     "void",
                                              "volatile",      "wchar_t",     "while",
                                              "xor",           "xor_eq"};
  return words;
}

// Public attribute names of Python's TensorDict (format spec §7.4), minus the allowed `data`.
const std::set<std::string>& tensordict_names() {
  static const std::set<std::string> names = {"abs",
                                              "abs_",
                                              "acos",
                                              "acos_",
                                              "add",
                                              "add_",
                                              "addcdiv",
                                              "addcdiv_",
                                              "addcmul",
                                              "addcmul_",
                                              "all",
                                              "all_gather",
                                              "all_reduce",
                                              "amax",
                                              "amin",
                                              "any",
                                              "apply",
                                              "apply_",
                                              "arecv",
                                              "as_tensor",
                                              "asend",
                                              "asin",
                                              "asin_",
                                              "atan",
                                              "atan_",
                                              "atleast_1d",
                                              "atleast_2d",
                                              "atleast_3d",
                                              "attrs",
                                              "auto_batch_size_",
                                              "auto_device_",
                                              "backward",
                                              "batch_dims",
                                              "batch_size",
                                              "bfloat16",
                                              "bitwise_and",
                                              "bool",
                                              "broadcast",
                                              "broadcast_to",
                                              "bytes",
                                              "cat",
                                              "cat_from_tensordict",
                                              "cat_tensors",
                                              "ceil",
                                              "ceil_",
                                              "chunk",
                                              "clamp",
                                              "clamp_max",
                                              "clamp_max_",
                                              "clamp_min",
                                              "clamp_min_",
                                              "clear",
                                              "clear_device_",
                                              "clear_refs_for_compile_",
                                              "clone",
                                              "complex128",
                                              "complex32",
                                              "complex64",
                                              "consolidate",
                                              "contiguous",
                                              "copy",
                                              "copy_",
                                              "copy_at_",
                                              "cos",
                                              "cos_",
                                              "cosh",
                                              "cosh_",
                                              "cpu",
                                              "create_nested",
                                              "cuda",
                                              "cummax",
                                              "cummin",
                                              "data_ptr",
                                              "del_",
                                              "densify",
                                              "depth",
                                              "detach",
                                              "detach_",
                                              "device",
                                              "dim",
                                              "div",
                                              "div_",
                                              "double",
                                              "dtype",
                                              "dumps",
                                              "empty",
                                              "entry_class",
                                              "erf",
                                              "erf_",
                                              "erfc",
                                              "erfc_",
                                              "exclude",
                                              "exp",
                                              "exp_",
                                              "expand",
                                              "expand_as",
                                              "expm1",
                                              "expm1_",
                                              "fill_",
                                              "filter_empty_",
                                              "filter_non_tensor_data",
                                              "flatten",
                                              "flatten_keys",
                                              "flip",
                                              "fliplr",
                                              "flipud",
                                              "float",
                                              "float16",
                                              "float32",
                                              "float64",
                                              "floor",
                                              "floor_",
                                              "frac",
                                              "frac_",
                                              "from_any",
                                              "from_consolidated",
                                              "from_csv",
                                              "from_dataclass",
                                              "from_dict",
                                              "from_dict_instance",
                                              "from_h5",
                                              "from_json",
                                              "from_list",
                                              "from_module",
                                              "from_modules",
                                              "from_namedtuple",
                                              "from_pandas",
                                              "from_parquet",
                                              "from_pytree",
                                              "from_remote_init",
                                              "from_schema",
                                              "from_struct_array",
                                              "from_tuple",
                                              "from_zarr",
                                              "fromkeys",
                                              "gather",
                                              "gather_and_stack",
                                              "get",
                                              "get_at",
                                              "get_item_shape",
                                              "get_non_tensor",
                                              "grad",
                                              "half",
                                              "init_remote",
                                              "int",
                                              "int16",
                                              "int32",
                                              "int64",
                                              "int8",
                                              "irecv",
                                              "is_consolidated",
                                              "is_contiguous",
                                              "is_cpu",
                                              "is_cuda",
                                              "is_empty",
                                              "is_floating_point",
                                              "is_locked",
                                              "is_memmap",
                                              "is_meta",
                                              "is_non_tensor",
                                              "is_shared",
                                              "isend",
                                              "isfinite",
                                              "isnan",
                                              "isneginf",
                                              "isposinf",
                                              "isreal",
                                              "items",
                                              "keys",
                                              "lazy_stack",
                                              "lerp",
                                              "lerp_",
                                              "lgamma",
                                              "lgamma_",
                                              "load",
                                              "load_",
                                              "load_memmap",
                                              "load_memmap_",
                                              "load_state_dict",
                                              "lock_",
                                              "log",
                                              "log10",
                                              "log10_",
                                              "log1p",
                                              "log1p_",
                                              "log2",
                                              "log2_",
                                              "log_",
                                              "logical_and",
                                              "logsumexp",
                                              "make_memmap",
                                              "make_memmap_from_storage",
                                              "make_memmap_from_tensor",
                                              "map",
                                              "map_iter",
                                              "masked_fill",
                                              "masked_fill_",
                                              "masked_select",
                                              "max",
                                              "maximum",
                                              "maximum_",
                                              "maybe_dense_stack",
                                              "mean",
                                              "memmap",
                                              "memmap_",
                                              "memmap_like",
                                              "memmap_refresh_",
                                              "min",
                                              "minimum",
                                              "minimum_",
                                              "mod",
                                              "moveaxis",
                                              "movedim",
                                              "mul",
                                              "mul_",
                                              "named_apply",
                                              "names",
                                              "nanmean",
                                              "nansum",
                                              "narrow",
                                              "ndim",
                                              "ndimension",
                                              "neg",
                                              "neg_",
                                              "new_empty",
                                              "new_full",
                                              "new_ones",
                                              "new_tensor",
                                              "new_zeros",
                                              "non_tensor_items",
                                              "norm",
                                              "numel",
                                              "numpy",
                                              "pad",
                                              "param_count",
                                              "permute",
                                              "pin_memory",
                                              "pin_memory_",
                                              "pop",
                                              "popitem",
                                              "pow",
                                              "pow_",
                                              "prod",
                                              "qint32",
                                              "qint8",
                                              "quantile",
                                              "quint4x2",
                                              "quint8",
                                              "reciprocal",
                                              "reciprocal_",
                                              "record_stream",
                                              "recv",
                                              "reduce",
                                              "refine_names",
                                              "rename",
                                              "rename_",
                                              "rename_key_",
                                              "repeat",
                                              "repeat_interleave",
                                              "replace",
                                              "requires_grad",
                                              "requires_grad_",
                                              "reshape",
                                              "roll",
                                              "rot90",
                                              "round",
                                              "round_",
                                              "rsub",
                                              "save",
                                              "saved_path",
                                              "scatter",
                                              "select",
                                              "send",
                                              "separates",
                                              "set",
                                              "set_",
                                              "set_at_",
                                              "set_non_tensor",
                                              "setdefault",
                                              "shape",
                                              "share_memory_",
                                              "sigmoid",
                                              "sigmoid_",
                                              "sign",
                                              "sign_",
                                              "sin",
                                              "sin_",
                                              "sinh",
                                              "sinh_",
                                              "size",
                                              "softmax",
                                              "sorted_keys",
                                              "split",
                                              "split_keys",
                                              "sqrt",
                                              "sqrt_",
                                              "squeeze",
                                              "stack",
                                              "stack_from_tensordict",
                                              "stack_tensors",
                                              "state_dict",
                                              "std",
                                              "sub",
                                              "sub_",
                                              "sum",
                                              "swapaxes",
                                              "swapdims",
                                              "tan",
                                              "tan_",
                                              "tanh",
                                              "tanh_",
                                              "tensor_split",
                                              "tile",
                                              "to",
                                              "to_csv",
                                              "to_dict",
                                              "to_h5",
                                              "to_json",
                                              "to_lazystack",
                                              "to_mds",
                                              "to_module",
                                              "to_namedtuple",
                                              "to_padded_tensor",
                                              "to_pandas",
                                              "to_parquet",
                                              "to_pytree",
                                              "to_store",
                                              "to_struct_array",
                                              "to_tensordict",
                                              "to_zarr",
                                              "tolist",
                                              "transpose",
                                              "trunc",
                                              "trunc_",
                                              "type",
                                              "uint16",
                                              "uint32",
                                              "uint64",
                                              "uint8",
                                              "unbind",
                                              "unflatten",
                                              "unflatten_keys",
                                              "unlock_",
                                              "unsqueeze",
                                              "update",
                                              "update_",
                                              "update_at_",
                                              "values",
                                              "var",
                                              "view",
                                              "where",
                                              "zero_",
                                              "zero_grad"};
  return names;
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_cpp_keyword(const std::string& name) { return cpp_keywords().count(name) > 0; }

bool is_macro_in_scope(const std::string& name) {
  static const std::set<std::string> macros = {
      // C library
      "assert", "errno", "offsetof", "NULL", "EOF", "stdin", "stdout", "stderr", "INT8_MIN",
      "INT8_MAX", "INT16_MIN", "INT16_MAX", "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX",
      "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX", "PTRDIFF_MIN",
      "PTRDIFF_MAX", "INT64_C", "UINT64_C",
      // glog, included by libtorch
      "CHECK", "DCHECK", "LOG", "VLOG", "LOG_IF", "CHECK_EQ", "CHECK_NE", "CHECK_LT", "CHECK_LE",
      "CHECK_GT", "CHECK_GE", "CHECK_NOTNULL",
      // libtorch
      "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "TORCH_WARN", "AT_ERROR", "AT_ASSERT", "C10_API",
      "TORCH_API", "C10_UNUSED", "C10_LIKELY", "C10_UNLIKELY",
      // the runtime
      "TENSORDICT_ABI_VERSION"};
  return macros.count(name) > 0;
}

// The private names of Python's `dir(TensorDict)` (tensordict v0.14.0), which Python's
// TensorClass checks field names against as it does the public ones, minus the allowed
// `_is_non_tensor`.
const std::set<std::string>& tensordict_private_names() {
  static const std::set<std::string> names = {"_CONFLICTING_BATCH_SIZES",
                                              "_MutableMapping__marker",
                                              "_SHARED_INPLACE_ERROR",
                                              "_abc_impl",
                                              "_add_batch_dim",
                                              "_apply_nest",
                                              "_batch_size_setter",
                                              "_build_lock_schema",
                                              "_cache",
                                              "_cast_reduction",
                                              "_change_batch_size",
                                              "_check_batch_size",
                                              "_check_device",
                                              "_check_dim_name",
                                              "_check_is_shared",
                                              "_check_new_batch_size",
                                              "_check_unlock",
                                              "_clone",
                                              "_clone_recurse",
                                              "_convert_inplace",
                                              "_convert_to_tensor",
                                              "_convert_to_tensordict",
                                              "_create_nested_str",
                                              "_create_nested_tuple",
                                              "_data",
                                              "_data_setter",
                                              "_default_get",
                                              "_depth",
                                              "_dtype",
                                              "_erase_cache",
                                              "_erase_names",
                                              "_exclude",
                                              "_fast_apply",
                                              "_flatten_keys_inplace",
                                              "_flatten_keys_outplace",
                                              "_from_dict_validated",
                                              "_from_module",
                                              "_get_at_str",
                                              "_get_at_tuple",
                                              "_get_names_idx",
                                              "_get_non_tensor",
                                              "_get_str",
                                              "_get_sub_tensordict",
                                              "_get_tuple",
                                              "_get_tuple_maybe_non_tensor",
                                              "_grad",
                                              "_has_cuda",
                                              "_has_exclusive_keys",
                                              "_has_mps",
                                              "_has_names",
                                              "_has_non_tensor",
                                              "_index_tensordict",
                                              "_inplace_rebind_leaves",
                                              "_inplace_set",
                                              "_irecv",
                                              "_is_locked",
                                              "_is_memmap",
                                              "_is_non_tensor_leaf",
                                              "_is_shared",
                                              "_isend",
                                              "_items_list",
                                              "_last_op",
                                              "_lazy",
                                              "_legacy_permute",
                                              "_legacy_squeeze",
                                              "_legacy_transpose",
                                              "_legacy_unsqueeze",
                                              "_legacy_view",
                                              "_load_memmap",
                                              "_lock_parents_weakrefs",
                                              "_locked_schema",
                                              "_make_memmap_subtd",
                                              "_map",
                                              "_maybe_names",
                                              "_maybe_remove_batch_dim",
                                              "_maybe_set_shared_attributes",
                                              "_memmap_",
                                              "_memmap_prefix",
                                              "_multithread_apply_flat",
                                              "_multithread_apply_nest",
                                              "_multithread_rebuild",
                                              "_nested_keys",
                                              "_new_impl",
                                              "_new_unsafe",
                                              "_parse_batch_size",
                                              "_permute",
                                              "_propagate_lock",
                                              "_propagate_unlock",
                                              "_recv",
                                              "_reduce",
                                              "_reduce_get_metadata",
                                              "_reduce_vals_and_metadata",
                                              "_remove_batch_dim",
                                              "_rename_subtds",
                                              "_repeat",
                                              "_safe",
                                              "_select",
                                              "_send",
                                              "_set_at_str",
                                              "_set_at_tuple",
                                              "_set_device",
                                              "_set_dict",
                                              "_set_names",
                                              "_set_non_tensor",
                                              "_set_str",
                                              "_set_tuple",
                                              "_squeeze",
                                              "_stack_onto_",
                                              "_stack_onto_at_",
                                              "_stream",
                                              "_sync_all",
                                              "_td_dim_names",
                                              "_to_consolidated",
                                              "_to_cuda_with_pin_mem",
                                              "_to_module",
                                              "_to_per_leaf",
                                              "_transform_keys",
                                              "_transpose",
                                              "_unbind",
                                              "_unsqueeze",
                                              "_update_at_fast",
                                              "_validate_key",
                                              "_validate_value",
                                              "_validate_value_batchfree",
                                              "_validate_value_batchfree_devicefree",
                                              "_validate_value_devicefree",
                                              "_validate_value_generic",
                                              "_values_list",
                                              "_view",
                                              "_view_dtype"};
  return names;
}

bool is_reserved_name(const std::string& name) {
  return name.rfind("__", 0) == 0 || tensordict_names().count(name) > 0 ||
         tensordict_private_names().count(name) > 0;
}

std::string internal_name_problem(const std::string& name) {
  // The attributes Python's TensorClass keeps on every class and instance (tensordict v0.14.0),
  // which Python does not check field names against: such a field would replace them.
  static const std::set<std::string> tensorclass = {"_autocast",
                                                    "_from_tensordict",
                                                    "_frozen",
                                                    "_is_initialized",
                                                    "_is_tensorclass",
                                                    "_nocast",
                                                    "_non_tensordict",
                                                    "_shadow",
                                                    "_tensor_only",
                                                    "_tensordict",
                                                    "_tensordict_fields",
                                                    "_type_hints"};
  if (tensorclass.count(name)) return "is an attribute Python's TensorClass keeps for itself";
  const bool meta_key = name == "_type" || name == tensordict::kFormatVersionKey ||
                        name == tensordict::kClassKey || name == tensordict::kNamesKey;
  if (meta_key) return "is an entry of the meta.json files a save writes beside the fields";
  return "";
}

bool is_generated_member_name(const std::string& name) {
  return contains(tensordict::kGeneratedMembers, name);
}

bool is_tensorclass_member_name(const std::string& name) {
  return contains(tensordict::kTensorClassMembers, name);
}

bool is_tensordict_member_name(const std::string& name) {
  return contains(tensordict::detail::kTensorDictMembers, name);
}

bool is_library_namespace(const std::string& name) {
  static const std::set<std::string> names = {"std", "at", "c10", "torch", "tensordict"};
  return names.count(name) > 0;
}

std::string namespace_problem(const std::string& name) {
  for (size_t start = 0;;) {
    const size_t end = name.find("::", start);
    const std::string part =
        name.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!is_identifier(part) || is_cpp_keyword(part))
      return "is not a C++ namespace name (like a::b)";
    if (start == 0 && is_library_namespace(part)) {
      return "is inside '" + part + "', a namespace of the libraries the generated code uses";
    }
    if (end == std::string::npos) return "";
    start = end + 2;
  }
}

bool is_global_name(const std::string& name) {
  return is_library_namespace(name) || name == "int64_t";
}

bool is_used_unqualified(const std::string& name) { return name == "TensorClass"; }

const tensordict::DtypeSpelling* schema_dtype(const std::string& name) {
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas && dtype.name == name) return &dtype;
  }
  return nullptr;
}

bool is_dtype(const std::string& name) { return schema_dtype(name) != nullptr; }

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas) names.emplace_back(dtype.name);
  }
  return names;
}

std::string dtype_list() {
  std::string list;
  for (const auto& name : dtype_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

bool is_python_dotted_name(const std::string& name) {
  std::istringstream parts(name);
  bool ok = !name.empty() && name.back() != '.';
  for (std::string part; ok && std::getline(parts, part, '.');) {
    ok = is_identifier(part) || part == "<locals>";
  }
  return ok;
}

bool is_python_keyword(const std::string& name) {
  static const std::set<std::string> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kKeywords.count(name) > 0;
}

}  // namespace tcgen
