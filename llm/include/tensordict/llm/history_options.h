#pragma once
/// \file
/// Options of History::apply_chat_template (TorchRL's keyword arguments, typed).

#include <iosfwd>
#include <string>
#include <vector>

#include "tensordict/llm/chat.h"
#include "tensordict/tensordict.h"

namespace tensordict::llm {

/// Options of History's apply_chat_template and apply_chat_template_tokens: the template, the
/// tokenizer and what to return, besides render_chat's options.
struct HistoryTemplateOptions : ChatTemplateOptions {
  /// A template name (chat_template_names()); empty: detected from `tokenizer_name` by
  /// detect_chat_template (chatml_format when that is empty).
  std::string chat_template_name;
  /// The tokenizer's name_or_path, used to pick a template when none is named.
  std::string tokenizer_name;
  /// Needed by apply_chat_template_tokens(); no tokenizer is bundled.
  Tokenizer tokenizer;
  /// apply_chat_template_tokens(): also return `assistant_masks`.
  bool return_assistant_tokens_mask = false;
  /// Id used to pad shorter token sequences of a batch.
  int64_t pad_token_id = 0;
};

/// Description of one field of History::default_spec (a TorchRL NonTensor spec).
struct NonTensorFieldSpec {
  /// The field's name: "role", "content", ...
  std::string name;
  std::vector<int64_t> shape;  ///< -1 for a variable dim
  /// TorchRL's example value (null when TorchRL has none).
  Json example_data;
};

/// TorchRL's Composite spec of a History (TorchRL 0.14, torchrl/data/llm/history.py), printable
/// as TorchRL prints it.
struct HistorySpec {
  std::vector<int64_t> shape;  ///< the Composite's shape: the History shape without its last dim
  /// One spec per History field, in schema order.
  std::vector<NonTensorFieldSpec> fields;
  std::string data_cls;  ///< Python's str() of the class: "<class '...History'>"

  /// An instance as TorchRL's Composite.zero() makes it: batch `shape` + [m], m the fields' last
  /// dim (1 where it is -1), every field its example data. Wrap it with
  /// History::from_tensordict.
  tensordict::TensorDict zero() const;
};

/// Prints `spec` as TorchRL prints a Composite (`Composite(\n    role: NonTensor(...`).
std::ostream& operator<<(std::ostream& os, const HistorySpec& spec);

}  // namespace tensordict::llm

// The names History's hand-written methods use, in the namespace of the generated class.
namespace torchrl::llm {
using tensordict::llm::HistorySpec;
using tensordict::llm::HistoryTemplateOptions;
}  // namespace torchrl::llm
