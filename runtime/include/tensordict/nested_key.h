#pragma once
/// \file
/// NestedKey: a plain key ("obs") or a path into nested TensorDicts ({"next", "obs"}), as Python's
/// str-or-tuple keys. A plain string is never split: "a.b" is one key, as in Python.

#include <c10/util/SmallVector.h>

#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace tensordict {

/// A key of a TensorDict entry: one string, or the path of strings to a nested entry.
class NestedKey {
 public:
  /// A plain key, never split: "a.b" is one key.
  ///@{
  NestedKey(const char* key) : parts_{std::string(key)} {}  // NOLINT(google-explicit-constructor)
  NestedKey(std::string key) : parts_{std::move(key)} {}    // NOLINT(google-explicit-constructor)
  NestedKey(std::string_view key)
      : parts_{std::string(key)} {}  // NOLINT(google-explicit-constructor)
  ///@}
  /// A path: `{"next", "obs"}` is Python's `("next", "obs")`. KeyError for an empty path.
  ///@{
  NestedKey(std::initializer_list<std::string> parts) : parts_(parts) { check(); }
  explicit NestedKey(const std::vector<std::string>& parts) : parts_(parts.begin(), parts.end()) {
    check();
  }
  ///@}

  /// Number of path components (1 for a plain key).
  size_t size() const { return parts_.size(); }
  /// True for a path of two or more components.
  bool is_nested() const { return parts_.size() > 1; }
  /// The components (unchecked access), first to last.
  ///@{
  const std::string& operator[](size_t i) const { return parts_[i]; }
  const std::string& front() const { return parts_.front(); }
  const std::string& back() const { return parts_.back(); }
  auto begin() const { return parts_.begin(); }
  auto end() const { return parts_.end(); }
  ///@}

  /// The key with `last` appended ({"a"} + "b" -> {"a", "b"}).
  NestedKey child(const std::string& last) const;
  /// The key without its last component; only valid when is_nested().
  NestedKey parent() const;
  /// The components as a vector.
  std::vector<std::string> to_vector() const { return {parts_.begin(), parts_.end()}; }

  /// Python spelling, for messages: 'obs' or ('next', 'obs').
  std::string repr() const;
  /// Components joined with `separator` ("next.obs").
  std::string join(std::string_view separator) const;

  /// Component-wise equality: "a" equals {"a"}; "a.b" differs from {"a", "b"}.
  ///@{
  friend bool operator==(const NestedKey& a, const NestedKey& b) { return a.parts_ == b.parts_; }
  friend bool operator!=(const NestedKey& a, const NestedKey& b) { return !(a == b); }
  ///@}
  /// Lexicographic order of the components (for sorted containers).
  friend bool operator<(const NestedKey& a, const NestedKey& b);

 private:
  NestedKey() = default;
  void check() const;
  c10::SmallVector<std::string, 2> parts_;
};

/// Writes key.repr(): 'obs' or ('next', 'obs').
std::ostream& operator<<(std::ostream& os, const NestedKey& key);

}  // namespace tensordict
