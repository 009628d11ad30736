#pragma once
/// \file
/// NestedKey: a plain key ("obs") or a path into nested TensorDicts ({"next", "obs"}), as Python's
/// str-or-tuple keys. A plain string is never split: "a.b" is one key, as in Python.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace tensordict {

namespace detail {
/// The hash a TensorDict's key index files a key under (never 0: 0 marks "not computed yet").
inline size_t key_hash(std::string_view key) noexcept {
  const size_t h = std::hash<std::string_view>{}(key);
  return h ? h : 1;
}
}  // namespace detail

/// A key of a TensorDict entry: one string, or the path of strings to a nested entry.
///
/// A plain key is one `std::string` (no allocation beyond the string's own); a path keeps its
/// components in one heap block. Like Python's `str`, a key remembers the hash of each component
/// once a lookup has computed it, so a key used again (a `static` key, the result of `keys()`)
/// does not hash again. Copies are independent; a key may be read by several threads at once.
class NestedKey {
 public:
  /// A plain key, never split: "a.b" is one key.
  ///@{
  NestedKey(const char* key) : head_(key) {}               // NOLINT(google-explicit-constructor)
  NestedKey(const std::string& key) : head_(key) {}        // NOLINT(google-explicit-constructor)
  NestedKey(std::string&& key) : head_(std::move(key)) {}  // NOLINT(google-explicit-constructor)
  NestedKey(std::string_view key) : head_(key) {}          // NOLINT(google-explicit-constructor)
  ///@}
  /// A path: `{"next", "obs"}` is Python's `("next", "obs")`; nested braces flatten as Python's
  /// nested tuples do (`{"a", {"b", {"c"}}}` is `("a", "b", "c")`). KeyError for an empty path.
  ///@{
  NestedKey(std::initializer_list<NestedKey> parts);
  explicit NestedKey(const std::vector<std::string>& parts) { assign(parts.data(), parts.size()); }
  ///@}
  /// Copies the components (and their remembered hashes).
  NestedKey(const NestedKey& other);
  /// Takes the components; `other` is left a valid (empty, plain) key.
  NestedKey(NestedKey&& other) noexcept
      : head_(std::move(other.head_)),
        hash_(other.hash_.exchange(0, std::memory_order_relaxed)),
        path_(other.path_) {
    other.path_ = nullptr;
  }
  /// Replaces the components by a copy of `other`'s.
  NestedKey& operator=(const NestedKey& other);
  /// Replaces the components by `other`'s; `other` is left a valid (empty, plain) key.
  NestedKey& operator=(NestedKey&& other) noexcept;
  /// Frees a path's components.
  ~NestedKey() {
    if (path_) free_path(path_);
  }

  /// Number of path components (1 for a plain key).
  size_t size() const { return path_ ? path_->size : 1; }
  /// True for a path of two or more components.
  bool is_nested() const { return path_ != nullptr; }
  /// The components (unchecked access), first to last.
  ///@{
  const std::string& operator[](size_t i) const { return begin()[i]; }
  const std::string& front() const { return *begin(); }
  const std::string& back() const { return end()[-1]; }
  const std::string* begin() const { return path_ ? path_->parts() : &head_; }
  const std::string* end() const { return begin() + size(); }
  ///@}
  /// `detail::key_hash` of component `i` (unchecked), computed once and then remembered.
  size_t hash(size_t i) const noexcept {
    std::atomic<size_t>& slot = path_ ? path_->hashes()[i] : hash_;
    const size_t h = slot.load(std::memory_order_relaxed);
    return h ? h : remember_hash(slot, (*this)[i]);
  }

  /// The key with `last` appended ({"a"} + "b" -> {"a", "b"}).
  NestedKey child(const std::string& last) const;
  /// The key without its last component; only valid when is_nested().
  NestedKey parent() const;
  /// The components as a vector.
  std::vector<std::string> to_vector() const { return {begin(), end()}; }

  /// Python spelling, for messages: 'obs' or ('next', 'obs').
  std::string repr() const;
  /// Components joined with `separator` ("next.obs").
  std::string join(std::string_view separator) const;
  /// The inverse of join: `text` split at every `separator` ("a.b" -> ("a", "b"); "a" -> "a";
  /// empty components kept). `separator` must not be empty.
  static NestedKey split(std::string_view text, std::string_view separator = ".");

  /// Component-wise equality: "a" equals {"a"}; "a.b" differs from {"a", "b"}.
  ///@{
  friend bool operator==(const NestedKey& a, const NestedKey& b) {
    if (!a.path_ && !b.path_) return a.head_ == b.head_;
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const NestedKey& a, const NestedKey& b) { return !(a == b); }
  ///@}
  /// Lexicographic order of the components (for sorted containers).
  friend bool operator<(const NestedKey& a, const NestedKey& b);

 private:
  // The components of a path (two or more) and their hashes, in one block: this header, then
  // `size` atomics, then `size` strings.
  struct Path {
    size_t size;
    std::atomic<size_t>* hashes() { return reinterpret_cast<std::atomic<size_t>*>(this + 1); }
    std::string* parts() { return reinterpret_cast<std::string*>(hashes() + size); }
  };

  NestedKey() = default;
  // A path of `n` components (a plain key when n == 1; KeyError when n == 0).
  void assign(const std::string* parts, size_t n);
  static Path* new_path(size_t n);  // the strings are left to construct
  // A path of the n `parts`, then `last` when given.
  static Path* copy_path(const std::string* parts, size_t n, const std::string* last);
  // The remembered hashes of `from`'s first n components (this has at least n).
  void copy_hashes(const NestedKey& from, size_t n);
  static void free_path(Path* path) noexcept;
  static size_t remember_hash(std::atomic<size_t>& slot, const std::string& part) noexcept {
    const size_t h = detail::key_hash(part);
    slot.store(h, std::memory_order_relaxed);
    return h;
  }

  std::string head_;                     // a plain key; empty for a path
  mutable std::atomic<size_t> hash_{0};  // head_'s hash, 0 until computed
  Path* path_ = nullptr;                 // a path's components, owned
};

/// Writes key.repr(): 'obs' or ('next', 'obs').
std::ostream& operator<<(std::ostream& os, const NestedKey& key);

}  // namespace tensordict
