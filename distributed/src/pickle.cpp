// Python pickles of plain data, both ways (see pickle.h). Opcode values are those of CPython's
// Lib/pickle.py.
#include "pickle.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "tensordict/errors.h"

namespace tensordict::dist::detail {
namespace {

namespace op {
constexpr char kMark = '(';
constexpr char kStop = '.';
constexpr char kPop = '0';
constexpr char kPopMark = '1';
constexpr char kNone = 'N';
constexpr char kNewTrue = '\x88';
constexpr char kNewFalse = '\x89';
constexpr char kBinInt = 'J';
constexpr char kBinInt1 = 'K';
constexpr char kBinInt2 = 'M';
constexpr char kLong1 = '\x8a';
constexpr char kBinFloat = 'G';
constexpr char kBinUnicode = 'X';
constexpr char kShortBinUnicode = '\x8c';
constexpr char kBinUnicode8 = '\x8d';
constexpr char kEmptyList = ']';
constexpr char kAppend = 'a';
constexpr char kAppends = 'e';
constexpr char kList = 'l';
constexpr char kEmptyTuple = ')';
constexpr char kTuple = 't';
constexpr char kTuple1 = '\x85';
constexpr char kTuple2 = '\x86';
constexpr char kTuple3 = '\x87';
constexpr char kEmptyDict = '}';
constexpr char kDict = 'd';
constexpr char kSetItem = 's';
constexpr char kSetItems = 'u';
constexpr char kBinPut = 'q';
constexpr char kLongBinPut = 'r';
constexpr char kMemoize = '\x94';
constexpr char kBinGet = 'h';
constexpr char kLongBinGet = 'j';
constexpr char kProto = '\x80';
constexpr char kFrame = '\x95';
constexpr char kGlobal = 'c';
constexpr char kStackGlobal = '\x93';
}  // namespace op

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// A value being unpickled. Containers are shared so that the memo refers to the object that
// later opcodes fill, as in Python.
struct Node {
  enum class Kind { Scalar, List, Tuple, Dict } kind = Kind::Scalar;
  Json scalar;
  std::vector<std::shared_ptr<Node>> items;  // a dict's keys and values alternate
};
using NodePtr = std::shared_ptr<Node>;

NodePtr scalar(Json value) {
  auto n = std::make_shared<Node>();
  n->scalar = std::move(value);
  return n;
}

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& what) : in_(bytes), what_(what) {}
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  // A pickle can put a container inside itself (through the memo); emptying every container
  // breaks such cycles, which shared ownership alone would leak.
  ~Reader() {
    for (const auto& n : containers_) n->items.clear();
  }

  Json run() {
    for (;;) {
      const size_t at = pos_;
      const char code = take(1)[0];
      if (code == op::kStop) break;
      step(code, at);
    }
    if (stack_.size() != 1 || !marks_.empty()) fail("the pickle does not hold exactly one value");
    budget_ = kMaxValues;
    return convert(*stack_[0], 0);
  }

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxValues = size_t{1} << 22;

  [[noreturn]] void fail(const std::string& why) const {
    throw FormatError(what_ + ": unreadable pickle (" + why + ")");
  }

  std::string_view take(size_t n) {
    if (n > in_.size() - pos_) fail("truncated");
    auto out = in_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  uint64_t le(int bytes) {
    const auto s = take(static_cast<size_t>(bytes));
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[i]);
    return v;
  }

  NodePtr container(Node::Kind kind, std::vector<NodePtr> items = {}) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->items = std::move(items);
    containers_.push_back(n);
    return n;
  }

  NodePtr pop() {
    if (stack_.size() <= floor()) fail("stack underflow");
    NodePtr n = std::move(stack_.back());
    stack_.pop_back();
    return n;
  }
  NodePtr& top() {
    if (stack_.size() <= floor()) fail("stack underflow");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The items pushed since the last MARK, which is dropped.
  std::vector<NodePtr> pop_mark() {
    if (marks_.empty()) fail("no mark");
    const size_t from = marks_.back();
    marks_.pop_back();
    std::vector<NodePtr> items(std::make_move_iterator(stack_.begin() + from),
                               std::make_move_iterator(stack_.end()));
    stack_.resize(from);
    return items;
  }
  void extend(Node::Kind kind, const std::vector<NodePtr>& items) {
    NodePtr& target = top();
    if (target->kind != kind) fail("items added to the wrong container");
    if (kind == Node::Kind::Dict && items.size() % 2 != 0) fail("a dict key without a value");
    target->items.insert(target->items.end(), items.begin(), items.end());
  }
  void memo_put(uint64_t index) {
    if (index > kMaxValues) fail("memo index out of range");
    if (memo_.size() <= index) memo_.resize(index + 1);
    memo_[index] = top();
  }
  void memo_get(uint64_t index) {
    if (index >= memo_.size() || !memo_[index]) fail("memo entry " + std::to_string(index));
    stack_.push_back(memo_[index]);
  }
  // Python writes str as UTF-8; anything else is refused here rather than failing wherever the
  // text is printed or saved later (nlohmann's strict serializer is the check).
  std::string utf8(std::string_view bytes) const {
    std::string text(bytes);
    try {
      (void)Json(text).dump();
    } catch (const nlohmann::json::type_error&) {
      fail("a str that is not valid UTF-8");
    }
    return text;
  }
  void push_string(size_t length) { stack_.push_back(scalar(utf8(take(length)))); }
  std::string line() {
    const size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) fail("truncated");
    std::string out = utf8(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  // A class reference becomes its dotted name: it is never imported.
  void push_class(const std::string& module, const std::string& name) {
    stack_.push_back(scalar(module + "." + name));
  }
  void push_long(size_t length) {
    const auto s = take(length);
    if (length > 9 || (length == 9 && s[8] != 0)) fail("an int beyond 64 bits");
    uint64_t v = 0;
    for (size_t i = std::min<size_t>(length, 8); i-- > 0;) {
      v = (v << 8) | static_cast<unsigned char>(s[i]);
    }
    if (length == 9 || length == 0) {
      stack_.push_back(scalar(v));
      return;
    }
    const bool negative = (static_cast<unsigned char>(s[length - 1]) & 0x80) != 0;
    if (negative && length < 8) v |= ~uint64_t{0} << (8 * length);
    stack_.push_back(scalar(static_cast<int64_t>(v)));
  }

  void step(char code, size_t at) {
    switch (code) {
      case op::kProto:
        take(1);
        return;
      case op::kFrame:
        take(8);
        return;
      case op::kMark:
        marks_.push_back(stack_.size());
        return;
      case op::kPop:
        pop();
        return;
      case op::kPopMark:
        pop_mark();
        return;
      case op::kNone:
        stack_.push_back(scalar(nullptr));
        return;
      case op::kNewTrue:
      case op::kNewFalse:
        stack_.push_back(scalar(code == op::kNewTrue));
        return;
      case op::kBinInt:
        stack_.push_back(scalar(static_cast<int64_t>(static_cast<int32_t>(le(4)))));
        return;
      case op::kBinInt1:
        stack_.push_back(scalar(le(1)));
        return;
      case op::kBinInt2:
        stack_.push_back(scalar(le(2)));
        return;
      case op::kLong1:
        push_long(le(1));
        return;
      case op::kBinFloat: {
        const auto s = take(8);
        uint64_t bits = 0;
        for (char c : s) bits = (bits << 8) | static_cast<unsigned char>(c);
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        stack_.push_back(scalar(d));
        return;
      }
      case op::kShortBinUnicode:
        push_string(le(1));
        return;
      case op::kBinUnicode:
        push_string(le(4));
        return;
      case op::kBinUnicode8:
        push_string(le(8));
        return;
      case op::kGlobal: {
        const std::string module = line();
        push_class(module, line());
        return;
      }
      case op::kStackGlobal: {
        const NodePtr name = pop();
        const NodePtr module = pop();
        if (!module->scalar.is_string() || !name->scalar.is_string()) fail("a bad class reference");
        push_class(module->scalar.get<std::string>(), name->scalar.get<std::string>());
        return;
      }
      case op::kEmptyList:
        stack_.push_back(container(Node::Kind::List));
        return;
      case op::kAppend: {
        NodePtr item = pop();
        extend(Node::Kind::List, {item});
        return;
      }
      case op::kAppends: {
        auto items = pop_mark();
        extend(Node::Kind::List, items);
        return;
      }
      case op::kList:
        stack_.push_back(container(Node::Kind::List, pop_mark()));
        return;
      case op::kEmptyTuple:
        stack_.push_back(container(Node::Kind::Tuple));
        return;
      case op::kTuple:
        stack_.push_back(container(Node::Kind::Tuple, pop_mark()));
        return;
      case op::kTuple1:
      case op::kTuple2:
      case op::kTuple3: {
        std::vector<NodePtr> items(static_cast<size_t>(code - op::kTuple1 + 1));
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        stack_.push_back(container(Node::Kind::Tuple, std::move(items)));
        return;
      }
      case op::kEmptyDict:
        stack_.push_back(container(Node::Kind::Dict));
        return;
      case op::kDict: {
        auto items = pop_mark();
        if (items.size() % 2 != 0) fail("a dict key without a value");
        stack_.push_back(container(Node::Kind::Dict, std::move(items)));
        return;
      }
      case op::kSetItem: {
        NodePtr value = pop();
        NodePtr key = pop();
        extend(Node::Kind::Dict, {key, value});
        return;
      }
      case op::kSetItems: {
        auto items = pop_mark();
        extend(Node::Kind::Dict, items);
        return;
      }
      case op::kMemoize:
        memo_put(memo_.size());
        return;
      case op::kBinPut:
        memo_put(le(1));
        return;
      case op::kLongBinPut:
        memo_put(le(4));
        return;
      case op::kBinGet:
        memo_get(le(1));
        return;
      case op::kLongBinGet:
        memo_get(le(4));
        return;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(code));
        fail(std::string("opcode ") + hex + " at byte " + std::to_string(at) +
             ": only None, bool, int, float, str, list, tuple and dict are read");
      }
    }
  }

  // The value as JSON, bounded in depth and in size, since shared (memoized) containers could
  // otherwise expand a small pickle into an enormous or endless value.
  Json convert(const Node& node, int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (budget_-- == 0) fail("more than " + std::to_string(kMaxValues) + " values");
    switch (node.kind) {
      case Node::Kind::Scalar:
        return node.scalar;
      case Node::Kind::List:
      case Node::Kind::Tuple: {
        Json out = Json::array();
        for (const auto& item : node.items) out.push_back(convert(*item, depth + 1));
        return out;
      }
      case Node::Kind::Dict: {
        Json out = Json::object();
        for (size_t i = 0; i < node.items.size(); i += 2) {
          const Node& key = *node.items[i];
          if (key.kind != Node::Kind::Scalar || !key.scalar.is_string()) {
            fail("a dict key that is not a str");
          }
          out[key.scalar.get<std::string>()] = convert(*node.items[i + 1], depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

  std::string_view in_;
  const std::string& what_;
  size_t pos_ = 0;
  size_t budget_ = 0;
  std::vector<NodePtr> stack_;
  std::vector<size_t> marks_;
  std::vector<NodePtr> memo_;
  std::vector<NodePtr> containers_;
};

}  // namespace

Pickler::Pickler() { out_ = {op::kProto, 4}; }

Pickler& Pickler::none() { return out_ += op::kNone, *this; }

Pickler& Pickler::boolean(bool value) {
  return out_ += value ? op::kNewTrue : op::kNewFalse, *this;
}

Pickler& Pickler::integer(int64_t value) {
  if (value >= std::numeric_limits<int32_t>::min() &&
      value <= std::numeric_limits<int32_t>::max()) {
    out_ += op::kBinInt;
    put_le(out_, static_cast<uint32_t>(static_cast<int32_t>(value)), 4);
  } else {
    out_ += op::kLong1;
    out_ += '\x08';
    put_le(out_, static_cast<uint64_t>(value), 8);
  }
  return *this;
}

Pickler& Pickler::real(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  out_ += op::kBinFloat;
  for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  return *this;
}

Pickler& Pickler::string(std::string_view value) {
  out_ += op::kBinUnicode8;
  put_le(out_, value.size(), 8);
  out_ += value;
  return *this;
}

Pickler& Pickler::json(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return none();
    case Json::value_t::boolean:
      return boolean(value.get<bool>());
    case Json::value_t::number_integer:
      return integer(value.get<int64_t>());
    case Json::value_t::number_unsigned: {
      const auto u = value.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return integer(static_cast<int64_t>(u));
      }
      out_ += op::kLong1;
      out_ += '\x09';  // a ninth, zero byte keeps the two's complement value positive
      put_le(out_, u, 8);
      out_ += '\0';
      return *this;
    }
    case Json::value_t::number_float:
      return real(value.get<double>());
    case Json::value_t::string:
      return string(value.get_ref<const std::string&>());
    case Json::value_t::array:
      begin();
      for (const Json& item : value) json(item);
      return end_list();
    case Json::value_t::object:
      begin();
      for (const auto& [key, item] : value.items()) string(key).json(item);
      return end_dict();
    default:
      throw TypeError("pickle: a JSON value of type " + std::string(value.type_name()) +
                      " has no Python counterpart");
  }
}

Pickler& Pickler::begin() { return out_ += op::kMark, *this; }
Pickler& Pickler::end_list() { return out_ += op::kList, *this; }
Pickler& Pickler::end_tuple() { return out_ += op::kTuple, *this; }
Pickler& Pickler::end_dict() { return out_ += op::kDict, *this; }

std::string Pickler::finish() {
  out_ += op::kStop;
  return std::move(out_);
}

Json unpickle(std::string_view bytes, const std::string& what) { return Reader(bytes, what).run(); }

}  // namespace tensordict::dist::detail
