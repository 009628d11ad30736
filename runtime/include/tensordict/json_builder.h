#pragma once
/// \file
/// Reading a meta.json in time linear in its size, for the runtime's JSON reader (parse_json) and
/// `tcgen import`: nlohmann's ordered_json keeps an object's members in a vector that its parser
/// searches on every insertion, so a meta.json of 200,000 keys took a minute. Torch-free and
/// header-only, so tcgen includes it too. Nothing here throws: the builder stops the parse at the
/// first problem and says which, and each reader reports it, naming the file, in its own way.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tensordict::format {

/// A handler for nlohmann's sax_parse that builds the value nlohmann's parser would, with each
/// open object's keys in a set so that members are appended without a search. Stops (sax_parse
/// returns false) at malformed text, at a key an object holds twice (nlohmann would keep the last
/// one silently) and at a container opened `max_open` deep (the root container is the first).
class LinearJsonBuilder {
 public:
  /// The value built: nlohmann's ordered JSON, members in file order.
  using Json = nlohmann::ordered_json;
  /// Why the parse stopped.
  enum class Stop { None, Malformed, DuplicateKey, TooDeep };

  /// A builder that stops at a container opened `max_open` deep.
  explicit LinearJsonBuilder(size_t max_open) : max_open_(max_open) {}

  /// Parses `text`: true with the value in take(), else false with stop() and detail() set.
  bool parse(std::string_view text) { return Json::sax_parse(text, this) && stop_ == Stop::None; }
  /// Why the parse stopped; Stop::None while it has not.
  Stop stop() const { return stop_; }
  /// The parser's message (Malformed) or the key given twice (DuplicateKey).
  const std::string& detail() const { return detail_; }
  /// The value parsed, moved out.
  Json take() { return std::move(root_); }

  /// The SAX events (sax_parse's interface).
  ///@{
  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return add(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return add(Json(v)); }
  bool string(Json::string_t& v) { return add(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return add(Json(Json::binary_t(std::move(v)))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool key(Json::string_t& k) {
    if (!keys_.back().insert(k).second) return stopped(Stop::DuplicateKey, k);
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    open_.pop_back();
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return stopped(Stop::Malformed, e.what());
  }
  ///@}

 private:
  bool stopped(Stop why, std::string detail) {
    stop_ = why;
    detail_ = std::move(detail);
    return false;
  }
  // Places `value` in the innermost open container (or at the root) and returns it.
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<Json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    auto& members = parent.get_ref<Json::object_t&>();
    members.Container::emplace_back(std::move(key_), std::move(value));  // no search
    return &members.Container::back().second;
  }
  bool add(Json&& value) {
    place(std::move(value));
    return true;
  }
  // Bounded while the value is still shallow: copying, dumping and destroying values recurse.
  bool open(Json&& container) {
    if (open_.size() >= max_open_) return stopped(Stop::TooDeep, {});
    const bool object = container.is_object();
    open_.push_back(place(std::move(container)));
    if (object) keys_.emplace_back();
    return true;
  }

  size_t max_open_;
  Json root_;
  std::vector<Json*> open_;                            // the open containers, outermost first
  std::vector<std::unordered_set<std::string>> keys_;  // of each open object
  std::string key_;
  Stop stop_ = Stop::None;
  std::string detail_;
};

}  // namespace tensordict::format
