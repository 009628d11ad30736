// Dim names (Python's `names`): how batch ops move them, and their propagation to nested
// TensorDicts. The rules are Python tensordict's, quirks included (see docs/runtime.md).
#include <ATen/ATen.h>

#include <algorithm>
#include <set>

#include "core/dim_names.h"
#include "core/lazy_state.h"

namespace tensordict {
namespace detail {

std::optional<DimNames> normalized_names(DimNames names) {
  const bool any = std::any_of(names.begin(), names.end(),
                               [](const std::optional<std::string>& n) { return n.has_value(); });
  return any ? std::optional<DimNames>(std::move(names)) : std::nullopt;
}

std::optional<DimNames> moved_names(const std::optional<DimNames>& names, size_t nb,
                                    const NamesOp& op) {
  if (!names || !op) return std::nullopt;
  const auto split = names->begin() + static_cast<std::ptrdiff_t>(std::min(nb, names->size()));
  DimNames out = op(DimNames(names->begin(), split));
  out.insert(out.end(), split, names->end());
  return normalized_names(std::move(out));
}

namespace {

bool is_mask(const IndexItem& ix) {
  return ix.is_tensor() && ix.tensor().scalar_type() == at::kBool;
}

// Batch dims an entry consumes (the ellipsis: none of its own).
size_t consumed(const IndexItem& ix) {
  if (ix.is_none() || ix.is_ellipsis() || ix.is_boolean()) return 0;
  if (is_mask(ix)) return static_cast<size_t>(ix.tensor().dim());
  return 1;
}

DimNames names_of_index(const Index& index, const DimNames& names) {
  const size_t nb = names.size();
  auto name_at = [&](size_t d) { return d < nb ? names[d] : std::nullopt; };
  // td[mask]: the masked dims become one unnamed dim.
  if (index.size() == 1 && is_mask(index[0]) && index[0].tensor().dim() > 0) {
    DimNames out{std::nullopt};
    for (auto d = static_cast<size_t>(index[0].tensor().dim()); d < nb; ++d)
      out.push_back(names[d]);
    return out;
  }
  size_t used = 0;
  for (const auto& ix : index) used += consumed(ix);
  DimNames out;
  size_t dim = 0;
  bool tensor_seen = false;
  for (const auto& ix : index) {
    if (ix.is_none() || ix.is_boolean() || (is_mask(ix) && ix.tensor().dim() == 0)) {
      out.emplace_back(std::nullopt);
    } else if (ix.is_ellipsis()) {
      for (size_t k = used; k < nb; ++k) out.push_back(name_at(dim++));
    } else if (ix.is_integer()) {
      ++dim;
    } else if (ix.is_slice()) {
      out.push_back(name_at(dim++));
    } else {
      // Python names the dims of the first index tensor after the dim it indexes; later index
      // tensors add no names (their dims broadcast with the first's).
      const at::Tensor& t = ix.tensor();
      if (!tensor_seen && is_mask(ix)) {
        out.push_back(t.dim() == 1 ? name_at(dim) : std::nullopt);
      } else if (!tensor_seen) {
        out.insert(out.end(), static_cast<size_t>(t.dim()), name_at(dim));
      }
      tensor_seen = true;
      dim += consumed(ix);
    }
  }
  for (; dim < nb; ++dim) out.push_back(names[dim]);
  return out;
}

}  // namespace

NamesOp index_names(const Index& index) {
  return [&index](const DimNames& names) { return names_of_index(index, names); };
}

NamesOp same_names() {
  return [](const DimNames& names) { return names; };
}

NamesOp erase_name(int64_t d) {
  return [d](const DimNames& names) {
    DimNames out = names;
    out.erase(out.begin() + d);
    return out;
  };
}

NamesOp insert_name(int64_t d) {
  return [d](const DimNames& names) {
    DimNames out = names;
    out.insert(out.begin() + d, std::nullopt);
    return out;
  };
}

void rename_nested(TensorDictImpl& impl, const std::optional<DimNames>& names) {
  for (auto& value : impl.values) {
    if (!value.is_tensordict() || value.tensordict().is_lazy_stack()) continue;
    auto& child = detail::impl_of(value.tensordict());
    if (!names) {
      child.names.reset();
      continue;
    }
    DimNames own = *names;
    for (size_t d = own.size(); d < child.batch_size.size(); ++d)
      own.push_back(child.names ? (*child.names)[d] : std::nullopt);
    child.names = own;
    rename_nested(child, own);
  }
}

void exchange_names(TensorDictImpl& parent, Value& value) {
  const TensorDict& child = value.tensordict();
  if (child.is_lazy_stack() || (!parent.names && !detail::impl_of(child).names)) return;
  const size_t nb = parent.batch_size.size();
  const DimNames current = child.names();
  if (parent.names) {
    if (std::equal(parent.names->begin(), parent.names->end(), current.begin())) return;
    DimNames wanted = *parent.names;
    wanted.insert(wanted.end(), current.begin() + static_cast<std::ptrdiff_t>(nb), current.end());
    TensorDict copy = detail::copy_structure(child);
    copy.refine_names(wanted);
    value = std::move(copy);
    return;
  }
  parent.names = normalized_names(DimNames(current.begin(), current.begin() + nb));
  if (parent.names) rename_nested(parent, parent.names);
}

}  // namespace detail

namespace {

// Python's `...` in refine_names.
const std::optional<std::string> kEllipsis = "...";

std::string names_str(const DimNames& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i ? ", " : "") + (names[i] ? "'" + *names[i] + "'" : std::string("None"));
  }
  return out + "]";
}

}  // namespace

DimNames TensorDict::names() const {
  if (!impl_->lazy) return impl_->names ? *impl_->names : DimNames(impl_->batch_size.size());
  // A lazy stack's names are its elements' (which must agree) with the stack dim's inserted.
  const auto& st = *impl_->lazy;
  DimNames names = st.tds[0].names();
  for (size_t k = 1; k < st.tds.size(); ++k) {
    if (st.tds[k].names() != names) {
      throw Error("names: element " + std::to_string(k) + " of the lazy stack has dim names " +
                  names_str(st.tds[k].names()) + ", element 0 has " + names_str(names));
    }
  }
  names.insert(names.begin() + st.stack_dim, st.dim_name);
  return names;
}

void TensorDict::set_names(std::optional<DimNames> names) {
  const auto& batch = impl_->batch_size;
  if (names && names->size() != batch.size()) {
    throw ShapeError("names: expected " + std::to_string(batch.size()) +
                     " dim names for batch_size " + shape_str(batch) + ", got " +
                     std::to_string(names->size()));
  }
  if (names) {
    std::set<std::string> seen;
    for (const auto& name : *names) {
      if (name && !seen.insert(*name).second) {
        throw Error("names: dim name '" + *name + "' is given to more than one dim");
      }
    }
  }
  if (impl_->lazy) return detail::lazy::set_names(*this, std::move(names));
  impl_->names = names ? detail::normalized_names(std::move(*names)) : std::nullopt;
  detail::rename_nested(*impl_, impl_->names);
}

TensorDict& TensorDict::refine_names(const DimNames& names) {
  const DimNames current = this->names();
  const auto ellipses = std::count(names.begin(), names.end(), kEllipsis);
  if (ellipses > 1) throw Error("refine_names: '...' may stand in " + names_str(names) + " once");
  if (ellipses == 1 && names.size() - 1 > current.size()) {
    throw ShapeError("refine_names: " + std::to_string(names.size() - 1) + " names for " +
                     std::to_string(current.size()) + " dims");
  }
  // The dims "..." covers keep their names.
  DimNames wanted;
  for (const auto& name : names) {
    if (name != kEllipsis) {
      wanted.push_back(name);
      continue;
    }
    const size_t covered = current.size() + 1 - names.size();
    const auto from = current.begin() + static_cast<std::ptrdiff_t>(wanted.size());
    wanted.insert(wanted.end(), from, from + static_cast<std::ptrdiff_t>(covered));
  }
  for (size_t d = 0; d < std::min(wanted.size(), current.size()); ++d) {
    if (current[d] && current[d] != wanted[d]) {
      throw Error("refine_names: cannot refine dim " + std::to_string(d) + " named '" +
                  *current[d] + "' to " + (wanted[d] ? "'" + *wanted[d] + "'" : "None"));
    }
  }
  set_names(std::move(wanted));
  return *this;
}

TensorDict TensorDict::rename(std::optional<DimNames> names) const {
  TensorDict out = detail::copy_structure(*this);
  out.rename_(std::move(names));
  return out;
}

TensorDict& TensorDict::rename_(std::optional<DimNames> names) {
  set_names(std::move(names));
  return *this;
}

TensorDict TensorDict::rename(const DimRenames& rename_map) const {
  TensorDict out = detail::copy_structure(*this);
  out.rename_(rename_map);
  return out;
}

TensorDict& TensorDict::rename_(const DimRenames& rename_map) {
  DimNames renamed = names();
  std::vector<bool> used(rename_map.size(), false);
  for (auto& name : renamed) {
    for (size_t i = 0; name && i < rename_map.size(); ++i) {
      if (rename_map[i].first != *name) continue;
      used[i] = true;
      name = rename_map[i].second;
      break;
    }
  }
  for (size_t i = 0; i < rename_map.size(); ++i) {
    if (!used[i]) {
      throw Error("rename: no dim is named '" + rename_map[i].first +
                  "' (names: " + names_str(names()) + ")");
    }
  }
  set_names(std::move(renamed));
  return *this;
}

}  // namespace tensordict
