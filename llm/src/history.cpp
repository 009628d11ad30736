// TorchRL History's methods (declared in schemas/history.yaml, attached to the generated class).
// A History is edited as rows of chat messages: a 0-D/1-D History is one conversation, a 2-D one a
// batch of conversations: a lazy stack of them (TorchRL's layout), or a dense batch whose "<none>"
// padding messages are dropped when read.
#include <ATen/ATen.h>

#include <ostream>

#include "history.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/llm/conversation.h"

namespace torchrl::llm {
namespace {

using tensordict::llm::ChatMessage;
using Rows = std::vector<std::vector<ChatMessage>>;
using tensordict::ShapeError;
using tensordict::TensorDict;

Rows rows_of(const TensorDict& td) {
  if (td.ndim() <= 1) return {tensordict::llm::conversation_messages(td)};
  if (td.ndim() > 2) {
    throw ShapeError("History supports up to 2 batch dims (conversations x messages), got " +
                     tensordict::shape_str(td.batch_size()));
  }
  Rows rows;
  for (const auto& row : td.unbind(0)) {
    auto messages = tensordict::llm::conversation_messages(row);
    // Padding is dropped here and restored when the rows are stacked again.
    messages.erase(std::remove_if(messages.begin(), messages.end(),
                                  [](const ChatMessage& m) {
                                    return m.role == tensordict::llm::kPaddingRole;
                                  }),
                   messages.end());
    rows.push_back(std::move(messages));
  }
  return rows;
}

TensorDict tensordict_of(const Rows& rows, int64_t ndim) {
  return ndim <= 1 ? tensordict::llm::conversation_tensordict(rows.front())
                   : tensordict::llm::batch_tensordict(rows);
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* what) {
  const int64_t d = dim < 0 ? dim + ndim : dim;
  if (d < 0 || d >= ndim) {
    throw ShapeError(std::string(what) + ": dim " + std::to_string(dim) +
                     " is out of range for a History with " + std::to_string(ndim) + " batch dims");
  }
  return d;
}

std::string template_of(const HistoryTemplateOptions& options) {
  if (!options.chat_template_name.empty()) return options.chat_template_name;
  return tensordict::llm::detect_chat_template(options.tokenizer_name);
}

}  // namespace

History History::append(const History& message, bool inplace, int64_t dim) {
  if (ndim() < 1) {
    throw ShapeError(
        "append: this History has no batch dim; make it a conversation first with "
        "unsqueeze(dim=0)");
  }
  if (message.ndim() != ndim() - 1) {
    throw ShapeError("append: the message must have " + std::to_string(ndim() - 1) +
                     " batch dims (one less than this History), got batch_size " +
                     tensordict::shape_str(message.batch_size()));
  }
  const int64_t d = normalize_dim(dim, ndim(), "append");
  Rows rows = rows_of(_tensordict());
  const Rows added = rows_of(message._tensordict());
  if (ndim() == 1) {
    rows.front().push_back(added.front().front());
  } else if (d == 1) {  // one new message per conversation
    const auto per_row = tensordict::llm::conversation_messages(message._tensordict());
    if (per_row.size() != rows.size()) {
      throw ShapeError("append: " + std::to_string(per_row.size()) + " messages for " +
                       std::to_string(rows.size()) + " conversations");
    }
    for (size_t b = 0; b < rows.size(); ++b) rows[b].push_back(per_row[b]);
  } else {  // one new conversation
    rows.push_back(added.front());
  }
  History out = wrap(tensordict_of(rows, ndim()));
  if (inplace) rebind(out._tensordict());
  return out;
}

History History::extend(const History& other, bool inplace, int64_t dim) {
  if (other.ndim() != ndim()) {
    throw ShapeError("extend: the new history must have as many batch dims as this one (" +
                     std::to_string(ndim()) + "), got batch_size " +
                     tensordict::shape_str(other.batch_size()));
  }
  const int64_t d = normalize_dim(dim, std::max<int64_t>(ndim(), 1), "extend");
  Rows rows = rows_of(_tensordict());
  const Rows more = rows_of(other._tensordict());
  if (ndim() <= 1 || d == 1) {  // longer conversations
    if (more.size() != rows.size()) {
      throw ShapeError("extend: " + std::to_string(more.size()) + " conversations for " +
                       std::to_string(rows.size()));
    }
    for (size_t b = 0; b < rows.size(); ++b) {
      rows[b].insert(rows[b].end(), more[b].begin(), more[b].end());
    }
  } else {  // more conversations
    rows.insert(rows.end(), more.begin(), more.end());
  }
  History out = wrap(tensordict_of(rows, std::max<int64_t>(ndim(), 1)));
  if (inplace) rebind(out._tensordict());
  return out;
}

History History::from_chats(const tensordict::Json& chats) {
  if (!chats.is_array() || chats.empty()) {
    throw ::tensordict::ValueError("from_chats: expected a non-empty list of messages or of chats");
  }
  // TorchRL's layout: one 0-D History per message, lazily stacked per chat, chats lazily stacked.
  // Errors name the message (and the chat, for a batch): "from_chats: chat 1, message 0: ...".
  auto conversation = [](const tensordict::Json& chat, const std::string& where) {
    if (!chat.is_array()) {
      throw tensordict::TypeError("from_chats: " + where +
                                  "a chat must be a list of messages, got " + chat.dump());
    }
    if (chat.empty()) return tensordict::llm::conversation_tensordict({});
    std::vector<TensorDict> messages;
    for (size_t i = 0; i < chat.size(); ++i) {
      try {
        messages.push_back(tensordict::llm::message_tensordict(chat[i]));
      } catch (const std::exception& e) {
        throw tensordict::TypeError("from_chats: " + where + "message " + std::to_string(i) + ": " +
                                    e.what());
      }
    }
    return tensordict::lazy_stack(messages, 0);
  };
  if (chats.front().is_object()) return wrap(conversation(chats, ""));
  std::vector<TensorDict> rows;
  for (size_t c = 0; c < chats.size(); ++c) {
    rows.push_back(conversation(chats[c], "chat " + std::to_string(c) + ", "));
  }
  return wrap(tensordict::lazy_stack(rows, 0));
}

History History::from_text(std::string_view text, std::string_view template_name) {
  auto messages = tensordict::llm::parse_chat(text, template_name);
  if (messages.empty()) throw ::tensordict::ValueError("from_text: the text holds no message");
  return wrap(tensordict::llm::conversation_tensordict(messages));
}

std::vector<std::string> History::apply_chat_template(const HistoryTemplateOptions& options) const {
  std::vector<std::string> texts;
  for (const auto& row : rows_of(_tensordict())) {
    texts.push_back(tensordict::llm::render_chat(row, template_of(options), options).text);
  }
  return texts;
}

TensorDict History::apply_chat_template_tokens(const HistoryTemplateOptions& options) const {
  if (!options.tokenizer) {
    throw ::tensordict::ValueError("apply_chat_template_tokens: options.tokenizer is not set");
  }
  std::vector<tensordict::llm::Encoding> encodings;
  std::vector<std::vector<int64_t>> masks;
  size_t longest = 0;
  for (const auto& row : rows_of(_tensordict())) {
    auto rendered = tensordict::llm::render_chat(row, template_of(options), options);
    encodings.push_back(options.tokenizer(rendered.text));
    if (options.return_assistant_tokens_mask) {
      masks.push_back(
          tensordict::llm::assistant_token_mask(encodings.back(), rendered.assistant_spans));
    }
    longest = std::max(longest, encodings.back().ids.size());
  }
  const auto batch = static_cast<int64_t>(encodings.size());
  const auto length = static_cast<int64_t>(longest);
  at::Tensor ids = at::full({batch, length}, options.pad_token_id, at::kLong);
  at::Tensor attention = at::zeros({batch, length}, at::kLong);
  at::Tensor assistant = at::zeros({batch, length}, at::kLong);
  for (int64_t b = 0; b < batch; ++b) {
    const auto& enc = encodings[static_cast<size_t>(b)];
    const auto n = static_cast<int64_t>(enc.ids.size());
    if (n == 0) continue;
    ids[b].narrow(0, 0, n).copy_(at::tensor(enc.ids, at::kLong));
    attention[b].narrow(0, 0, n).fill_(1);
    if (!masks.empty())
      assistant[b].narrow(0, 0, n).copy_(at::tensor(masks[static_cast<size_t>(b)], at::kLong));
  }
  TensorDict out({{"input_ids", ids}, {"attention_mask", attention}}, {batch});
  if (options.return_assistant_tokens_mask) out.set("assistant_masks", assistant);
  return out;
}

HistorySpec History::default_spec(std::vector<int64_t> shape) {
  if (shape.empty()) throw ShapeError("default_spec: the shape needs at least the message dim");
  HistorySpec spec;
  spec.shape.assign(shape.begin(), shape.end() - 1);
  spec.data_cls = class_spec().python_type;
  for (const auto& field : class_spec().fields) {
    // TorchRL's example data: the field's default (is_complete), "foo" for a field annotated
    // exactly `str` (none of History's: role and content are unions), else None.
    const std::string name = field.name;
    spec.fields.push_back(
        {name, shape, name == "is_complete" ? tensordict::Json(true) : tensordict::Json(nullptr)});
  }
  return spec;
}

}  // namespace torchrl::llm

namespace tensordict::llm {

namespace {
// Python's str(): a string as is, anything else as its repr.
std::string python_str(const tensordict::Json& value) {
  return value.is_string() ? value.get<std::string>() : tensordict::python_repr(value);
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const HistorySpec& spec) {
  auto size = [](const std::vector<int64_t>& s) {
    return "torch.Size(" + tensordict::shape_str(s) + ")";
  };
  os << "Composite(\n";
  for (const auto& field : spec.fields) {
    os << "    " << field.name << ": NonTensor(\n"
       << "        shape=" << size(field.shape) << ",\n"
       << "        space=None,\n"
       << "        device=None,\n"
       << "        dtype=None,\n"
       << "        domain=None,\n"
       << "        example_data=" << python_str(field.example_data) << "),\n";
  }
  os << "    device=None,\n"
     << "    shape=" << size(spec.shape) << ",\n"
     << "    data_cls=" << spec.data_cls << ")";
  return os;
}

tensordict::TensorDict HistorySpec::zero() const {
  std::vector<int64_t> batch = shape;
  batch.push_back(fields.empty() || fields.front().shape.back() < 0 ? 1
                                                                    : fields.front().shape.back());
  tensordict::TensorDict td({}, batch);
  for (const auto& field : fields) {
    if (!field.example_data.is_null()) td.set_non_tensor(field.name, field.example_data);
  }
  return td;
}

}  // namespace tensordict::llm
