#include "names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "python_names.h"

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

bool is_reserved_name(const std::string& name) {
  if (name == "_is_non_tensor") return false;
  return name[0] == '_' || tensordict_names().count(name) > 0;
}

namespace {

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const tensordict::DtypeSpelling* schema_dtype(const std::string& name) {
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas && dtype.name == name) return &dtype;
  }
  return nullptr;
}

}  // namespace

bool is_generated_member_name(const std::string& name) {
  return contains(tensordict::kGeneratedMembers, name);
}

bool is_tensorclass_member_name(const std::string& name) {
  return contains(tensordict::kTensorClassMembers, name);
}

bool is_library_namespace(const std::string& name) {
  static const std::set<std::string> names = {"std", "at", "c10", "torch", "tensordict"};
  return names.count(name) > 0;
}

bool is_global_name(const std::string& name) {
  return is_library_namespace(name) || name == "int64_t";
}

bool is_used_unqualified(const std::string& name) { return name == "TensorClass"; }

bool is_dtype(const std::string& name) { return schema_dtype(name) != nullptr; }

std::string dtype_list() {
  std::string list;
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas) list += (list.empty() ? "" : ", ") + std::string(dtype.name);
  }
  return list;
}

std::string aten_dtype(const std::string& dtype) {
  return "::at::k" + std::string(schema_dtype(dtype)->scalar_type);
}

std::vector<std::string> option_names(const tensordict::ClassOptions& options) {
  std::vector<std::string> names;
  for (size_t i = 0; i < tensordict::kClassOptionNames.size(); ++i) {
    if (options.has(static_cast<tensordict::ClassOption>(i))) {
      names.emplace_back(tensordict::kClassOptionNames[i]);
    }
  }
  return names;
}

std::string accessor_name(const Field& field) {
  const bool hides_member = is_reserved_name(field.name) ||
                            is_tensorclass_member_name(field.name) ||
                            is_tensorclass_member_name("set_" + field.name);
  return hides_member ? std::string(tensordict::kReservedFieldPrefix) + field.name : field.name;
}

std::string setter_name(const Field& field) { return "set_" + accessor_name(field); }

std::string cpp_type(const Type& type, const std::string& current_namespace) {
  switch (type.kind) {
    case TypeKind::Tensor:
      return "::at::Tensor";
    case TypeKind::Str:
      return "::std::string";
    case TypeKind::Int:
      return "::std::int64_t";
    case TypeKind::Float:
      return "double";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Any:
      return "::tensordict::Json";
    case TypeKind::List:
      return "::std::vector<" + cpp_type(type.args.at(0), current_namespace) + ">";
    case TypeKind::Optional:
      return optional_of(cpp_type(type.args.at(0), current_namespace));
    case TypeKind::Class:
      return type.class_name;  // qualified by the emitter once the class is resolved
  }
  return "void";
}

std::string qualified_class_name(const Class& cls, const std::string& current_namespace) {
  if (cls.cpp_namespace == current_namespace || cls.cpp_namespace.empty()) return cls.name;
  return "::" + cls.cpp_namespace + "::" + cls.name;
}

std::string python_type_string(const Class& cls) {
  return "<class '" + python_dotted_name(cls) + "'>";
}

std::string optional_of(const std::string& type) { return "::std::optional<" + type + ">"; }

std::string autocast_of(const std::string& type) { return "::tensordict::Autocast<" + type + ">"; }

std::string const_ref(const std::string& type) { return "const " + type + "&"; }

std::string moved(const std::string& expr) { return "::std::move(" + expr + ")"; }

std::string as_field(const std::string& expr) { return "as_field(" + expr + ")"; }

std::string field_reader(const Type& type, const std::string& element) {
  const std::string prefix = is_optional(type) ? "optional_" : "";
  switch (element_type(type).kind) {
    case TypeKind::Tensor:
      return prefix + "tensor_field";
    case TypeKind::Class:
      return prefix + "nested_field<" + element + ">";
    case TypeKind::Any:
      if (prefix.empty()) return "any_field";  // None reads as null, as Python returns None
      break;
    default:
      break;
  }
  return prefix + "value_field<" + element + ">";
}

namespace {

std::string kind_constant(TypeKind kind) {
  return "Kind::" + std::string(tensordict::spelling(field_kind(kind)).enumerator);
}

std::string shape_initializer(const std::vector<Dim>& shape) {
  std::string dims;
  for (const auto& d : shape) {
    dims += (dims.empty() ? "" : ", ") + (d.name.empty() ? std::to_string(d.size) : "-1");
  }
  return "{" + dims + "}";
}

}  // namespace

std::string field_spec_head(const Field& field) {
  return "Field(\"" + field.name + "\", " + kind_constant(element_type(field.type).kind) + ")";
}

namespace {

// Raw string literal of `text`, with a delimiter that `text` does not close.
std::string cpp_raw_string_literal(const std::string& text) {
  std::string delimiter;
  for (int n = 0; text.find(")" + delimiter + "\"") != std::string::npos; ++n) {
    delimiter = "tc" + std::to_string(n);
  }
  return "R\"" + delimiter + "(" + text + ")" + delimiter + "\"";
}

// A default as the runtime reads it back: numbers of float fields as floats (2 -> 2.0), so that
// the value stored is the one Args' `2.0` gives.
nlohmann::ordered_json typed_default(const nlohmann::ordered_json& value, const Type& type) {
  const Type& element = element_type(type);
  if (element.kind == TypeKind::Float && value.is_number_integer()) {
    return static_cast<double>(value.get<int64_t>());
  }
  if (element.kind != TypeKind::List || !value.is_array()) return value;
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const auto& item : value) items.push_back(typed_default(item, element.args.at(0)));
  return items;
}

}  // namespace

std::vector<std::string> field_spec_calls(const Field& field, const std::string& nested) {
  const Type& type = field.type;
  const Type& element = element_type(type);
  std::vector<std::string> calls;
  if (is_optional(type)) calls.push_back(".nullable()");
  if (element.kind == TypeKind::Class) calls.push_back(".with_class(&" + nested + "::class_spec)");
  if (element.kind == TypeKind::Tensor && element.dtype)
    calls.push_back(".with_dtype(" + aten_dtype(*element.dtype) + ")");
  if (element.kind == TypeKind::Tensor && element.shape)
    calls.push_back(".with_shape(" + shape_initializer(*element.shape) + ")");
  // What loading a directory of an older schema version needs: the value of a field it lacks,
  // the names it may hold the field under.
  const auto& value = field.default_value;
  if (value && !value->is_null() && value->dump().find("null") == std::string::npos) {
    // (JSON spells .inf and .nan as null: such a default is left out, the field stays required)
    const std::string json = typed_default(*value, type).dump();
    calls.push_back(".with_default(" + cpp_raw_string_literal(json) + ")");
  }
  if (!field.renamed_from.empty()) {
    std::string names;
    for (const auto& old : field.renamed_from)
      names += (names.empty() ? "\"" : ", \"") + old + "\"";
    calls.push_back(".renamed_from({" + names + "})");
  }
  if (field.deprecated) calls.push_back(".as_deprecated()");
  return calls;
}

std::string nullopt_literal() { return "::std::nullopt"; }

std::string json_null_literal() { return "nullptr"; }

namespace {

// Escapes what cannot stand for itself in a "..." literal: quotes, backslashes, control
// characters (CR, NUL, ...; octal, which never swallows a following digit as \x would) and the
// second '?' of a pair (a trigraph under -trigraphs, a -Wtrigraphs warning otherwise).
std::string cpp_string_literal(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || (c == '?' && i > 0 && text[i - 1] == '?')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7F) {
      const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)),
                            static_cast<char>('0' + ((byte >> 3) & 7)),
                            static_cast<char>('0' + (byte & 7)), '\0'};
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string float_literal(double value) {
  if (std::isnan(value)) return "::std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value)) {
    return std::string(value < 0 ? "-" : "") + "::std::numeric_limits<double>::infinity()";
  }
  return nlohmann::ordered_json(value).dump();
}

std::string text_literal(const std::string& text) {
  // A NUL would end a plain literal's std::string early; give the length.
  if (text.find('\0') == std::string::npos) return cpp_string_literal(text);
  return "::std::string(" + cpp_string_literal(text) + ", " + std::to_string(text.size()) + ")";
}

std::string list_literal(const nlohmann::ordered_json& items, const Type& list) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : ", ") + default_literal(item, list.args.at(0));
  }
  return cpp_type(list, "") + "{" + text + "}";
}

std::string number_literal(const nlohmann::ordered_json& value, const Type& element) {
  if (element.kind == TypeKind::Float && value.is_number_integer()) {
    return std::to_string(value.get<int64_t>()) + ".0";
  }
  if (value.is_number_float()) return float_literal(value.get<double>());
  // -9223372036854775808 would be the negation of a literal too large for int64_t (a warning).
  if (value.is_number_integer() && value.get<int64_t>() == std::numeric_limits<int64_t>::min()) {
    return "(-9223372036854775807 - 1)";
  }
  return value.dump();
}

}  // namespace

std::string default_literal(const nlohmann::ordered_json& value, const Type& type) {
  if (value.is_null()) return is_optional(type) ? nullopt_literal() : json_null_literal();
  const Type& element = element_type(type);
  if (element.kind == TypeKind::Any) {
    return "::tensordict::Json::parse(" + cpp_raw_string_literal(value.dump()) + ")";
  }
  if (value.is_string()) return text_literal(value.get_ref<const std::string&>());
  if (value.is_array()) return list_literal(value, element);
  return number_literal(value, element);
}

std::string header_name(const std::string& schema_path) {
  return std::filesystem::path(schema_path).stem().string() + ".h";
}

bool is_python_dotted_name(const std::string& name) {
  std::istringstream parts(name);
  bool ok = !name.empty() && name.back() != '.';
  for (std::string part; ok && std::getline(parts, part, '.');) {
    ok = is_identifier(part) || part == "<locals>";
  }
  return ok;
}

std::string display_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path relative = fs::relative(fs::absolute(path, ec), fs::current_path(ec), ec);
  std::string text = relative.generic_string();
  if (ec || text.empty() || text.rfind("..", 0) == 0) {
    return fs::path(path).filename().generic_string();
  }
  return text;
}

}  // namespace tcgen
