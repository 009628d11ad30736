#pragma once
// A tensor field's default as a schema writes it, torch-free (runtime/src/tensorclass/
// tensor_default.cpp): tcgen reads it to check and spell it (C++'s field table, Python's
// default_factory), the runtime to make each instance's tensor. One grammar for both. Not
// installed.
//
// A default is either a literal, made as `torch.tensor(value)` makes it (a number, a bool, or
// nested lists of them), or a factory call, written as text: `zeros(3, 4)`, `ones(2)`, `zeros()`
// (a scalar), `full((2, 3), 0.5)`. Each instance gets a tensor of its own (Python's
// `default_factory`), of the field's dtype when the schema gives one, else of torch's.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tensordict {

/// A tensor default, read.
struct TensorDefault {
  enum class Form { Literal, Zeros, Ones, Full };
  Form form = Form::Literal;
  /// Literal: the value (a number, a bool, or a rectangular nested list of them).
  nlohmann::ordered_json literal;
  /// A factory's sizes; a literal's shape.
  std::vector<int64_t> sizes;
  /// `full`'s value, as written (`0.5`, `2`, `true`), and whether it is a float or a bool (torch
  /// makes `full((2,), 2)` an int64 tensor, `full((2,), 0.5)` a float32 one).
  std::string fill;
  bool fill_is_float = false;
  bool fill_is_bool = false;
};

/// The most elements a default may have: it is made for every instance.
inline constexpr int64_t kMaxTensorDefaultElements = int64_t{1} << 20;

/// The factories' names, as a schema writes them and as torch spells them.
const char* factory_name(TensorDefault::Form form);

/// Reads a tensor field's `default:` (schema JSON). nullopt with `error` set ("unknown factory
/// 'zero' (zeros, ones, full)") when it is none of the forms above.
std::optional<TensorDefault> read_tensor_default(const nlohmann::ordered_json& value,
                                                 std::string& error);

}  // namespace tensordict
