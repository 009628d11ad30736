#include "tensordict/nested_key.h"

#include <new>
#include <ostream>

#include "tensordict/errors.h"

namespace tensordict {

NestedKey::Path* NestedKey::new_path(size_t n) {
  const size_t bytes = sizeof(Path) + n * (sizeof(std::atomic<size_t>) + sizeof(std::string));
  auto* path = static_cast<Path*>(::operator new(bytes));
  path->size = n;
  for (size_t i = 0; i < n; ++i) new (path->hashes() + i) std::atomic<size_t>(0);
  return path;  // the caller constructs the n strings
}

void NestedKey::free_path(Path* path) noexcept {
  std::string* parts = path->parts();
  for (size_t i = 0; i < path->size; ++i) parts[i].~basic_string();
  ::operator delete(path);
}

NestedKey::Path* NestedKey::copy_path(const std::string* parts, size_t n, const std::string* last) {
  const size_t total = n + (last ? 1 : 0);
  Path* path = new_path(total);
  size_t built = 0;
  try {
    for (; built < n; ++built) new (path->parts() + built) std::string(parts[built]);
    if (last) new (path->parts() + built++) std::string(*last);
  } catch (...) {
    path->size = built;
    free_path(path);
    throw;
  }
  return path;
}

void NestedKey::assign(const std::string* parts, size_t n) {
  if (n == 0) throw KeyError("a nested key needs at least one component, got ()");
  if (n == 1) {
    head_ = parts[0];
  } else {
    path_ = copy_path(parts, n, nullptr);
  }
}

void NestedKey::copy_hashes(const NestedKey& from, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    std::atomic<size_t>& to = path_ ? path_->hashes()[i] : hash_;
    const std::atomic<size_t>& src = from.path_ ? from.path_->hashes()[i] : from.hash_;
    to.store(src.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
}

NestedKey::NestedKey(std::initializer_list<NestedKey> parts) {
  std::vector<std::string> flat;
  for (const NestedKey& part : parts) flat.insert(flat.end(), part.begin(), part.end());
  assign(flat.data(), flat.size());
}

NestedKey::NestedKey(const NestedKey& other)
    : head_(other.head_), hash_(other.hash_.load(std::memory_order_relaxed)) {
  if (other.path_) {
    path_ = copy_path(other.path_->parts(), other.path_->size, nullptr);
    copy_hashes(other, other.path_->size);
  }
}

NestedKey& NestedKey::operator=(const NestedKey& other) {
  if (this != &other) *this = NestedKey(other);
  return *this;
}

NestedKey& NestedKey::operator=(NestedKey&& other) noexcept {
  if (this == &other) return *this;
  head_ = std::move(other.head_);
  hash_.store(other.hash_.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
  if (path_) free_path(path_);
  path_ = other.path_;
  other.path_ = nullptr;
  return *this;
}

NestedKey NestedKey::child(const std::string& last) const {
  NestedKey key;
  key.path_ = copy_path(begin(), size(), &last);
  key.copy_hashes(*this, size());
  return key;
}

NestedKey NestedKey::parent() const {
  if (!is_nested()) throw KeyError("key " + repr() + " has no parent");
  NestedKey key;
  key.assign(begin(), size() - 1);
  key.copy_hashes(*this, size() - 1);
  return key;
}

std::string NestedKey::repr() const {
  if (!is_nested()) return "'" + head_ + "'";
  std::string out = "(";
  for (size_t i = 0; i < size(); ++i) {
    if (i) out += ", ";
    out += "'" + (*this)[i] + "'";
  }
  return out + ")";
}

std::string NestedKey::join(std::string_view separator) const {
  std::string out = front();
  for (size_t i = 1; i < size(); ++i) out.append(separator).append((*this)[i]);
  return out;
}

NestedKey NestedKey::split(std::string_view text, std::string_view separator) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t at = text.find(separator, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) break;
    start = at + separator.size();
  }
  return NestedKey(parts);
}

bool operator<(const NestedKey& a, const NestedKey& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::ostream& operator<<(std::ostream& os, const NestedKey& key) { return os << key.repr(); }

}  // namespace tensordict
