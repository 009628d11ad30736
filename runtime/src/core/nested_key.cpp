#include "tensordict/nested_key.h"

#include <ostream>

#include "tensordict/errors.h"

namespace tensordict {

void NestedKey::check() const {
  if (parts_.empty()) throw KeyError("a nested key needs at least one component, got ()");
}

NestedKey NestedKey::child(const std::string& last) const {
  NestedKey key = *this;
  key.parts_.push_back(last);
  return key;
}

NestedKey NestedKey::parent() const {
  if (!is_nested()) throw KeyError("key " + repr() + " has no parent");
  NestedKey key;
  key.parts_.assign(parts_.begin(), parts_.end() - 1);
  return key;
}

std::string NestedKey::repr() const {
  if (!is_nested()) return "'" + parts_.front() + "'";
  std::string out = "(";
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (i) out += ", ";
    out += "'" + parts_[i] + "'";
  }
  return out + ")";
}

std::string NestedKey::join(std::string_view separator) const {
  std::string out = parts_.front();
  for (size_t i = 1; i < parts_.size(); ++i) out.append(separator).append(parts_[i]);
  return out;
}

bool operator<(const NestedKey& a, const NestedKey& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::ostream& operator<<(std::ostream& os, const NestedKey& key) { return os << key.repr(); }

}  // namespace tensordict
