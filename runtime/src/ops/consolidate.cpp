// consolidate(): every tensor leaf becomes a view of one flat byte buffer, so copies (clone, to,
// update_ between equal layouts, zero_) move one buffer instead of one per leaf. The buffer as a
// file (Python's consolidate(filename=...) / from_consolidated) is memmap/consolidated_file.cpp's.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "core/lazy_state.h"
#include "ops/util.h"

namespace tensordict {

namespace detail {
namespace {

// Python's layout: leaves in insertion order (depth first), each padded to a multiple of 8 bytes,
// so that a consolidated buffer sent to or received from Python lines up leaf by leaf.
constexpr int64_t kPad = 8;

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

bool views(const at::Tensor& t, const at::Tensor& flat) {
  return t.storage().unsafeGetStorageImpl() == flat.storage().unsafeGetStorageImpl();
}

bool all_leaves_view(const TensorDict& td, const at::Tensor& flat) {
  for (const auto& value : detail::impl_of(td).values) {
    if (value.is_tensor() && !views(value.tensor(), flat)) return false;
    if (value.is_tensordict() && !all_leaves_view(value.tensordict(), flat)) return false;
  }
  return true;
}

}  // namespace

// Built directly on a TensorImpl: going through ATen ops (empty + set_) costs two dispatches per
// leaf, which is what consolidated copies must avoid.
at::Tensor make_view(const at::Tensor& flat, at::ScalarType dtype, at::IntArrayRef sizes,
                     at::IntArrayRef strides, int64_t storage_offset) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::Storage(flat.storage()), flat.key_set(),
                                                   c10::scalarTypeToTypeMeta(dtype));
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(storage_offset);
  return at::Tensor(std::move(impl));
}

// ATen's generic copy kernel moves uint8 buffers well below memcpy speed; host buffers are
// plain bytes, so memcpy them (other devices go through copy_).
void copy_flat(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.device().is_cpu() && src.device().is_cpu() && dst.nbytes() == src.nbytes()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), src.nbytes());
  } else {
    dst.copy_(src);
  }
}

at::Tensor clone_flat(const at::Tensor& flat) {
  at::Tensor out = at::empty_like(flat);
  copy_flat(out, flat);
  return out;
}

at::Tensor view_in(const at::Tensor& flat, const at::Tensor& like) {
  return make_view(flat, like.scalar_type(), like.sizes(), like.strides(), like.storage_offset());
}

at::Tensor consolidated_buffer(const TensorDict& td) {
  const at::Tensor& flat = detail::impl_of(td).consolidated;
  return flat.defined() && all_leaves_view(td, flat) ? flat : at::Tensor();
}

TensorDict rebuild_over(const TensorDict& td, const at::Tensor& flat,
                        std::optional<at::Device> device) {
  TensorDict out = map_leaves(
      td, [&flat](const at::Tensor& t) { return view_in(flat, t); }, "consolidate", device);
  detail::impl_of(out).consolidated = flat;
  return out;
}

void inherit_consolidated(const TensorDict& src, TensorDict& out) {
  const at::Tensor flat = consolidated_buffer(src);
  if (flat.defined() && all_leaves_view(out, flat)) detail::impl_of(out).consolidated = flat;
}

bool same_layout(const TensorDict& a, const TensorDict& b) {
  const auto& x = detail::impl_of(a);
  const auto& y = detail::impl_of(b);
  if (x.keys != y.keys) return false;
  for (size_t i = 0; i < x.values.size(); ++i) {
    const Value& u = x.values[i];
    const Value& v = y.values[i];
    if (u.kind() != v.kind()) return false;
    if (u.is_tensordict() && !same_layout(u.tensordict(), v.tensordict())) return false;
    if (!u.is_tensor()) continue;
    const at::Tensor& s = u.tensor();
    const at::Tensor& t = v.tensor();
    if (s.scalar_type() != t.scalar_type() || s.sizes() != t.sizes() ||
        s.strides() != t.strides() || s.storage_offset() != t.storage_offset()) {
      return false;
    }
  }
  return true;
}

namespace {

void collect(const TensorDict& td, const std::string& prefix,
             std::vector<ConsolidatedLayout::Leaf>& out) {
  const auto& impl = detail::impl_of(td);
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    const std::string key = join_key(prefix, impl.keys[i]);
    const Value& value = impl.values[i];
    if (value.is_tensor()) out.push_back({key, value.tensor()});
    if (value.is_tensordict()) collect(value.tensordict(), key, out);
  }
}

}  // namespace

ConsolidatedLayout consolidated_layout(const TensorDict& td) {
  ConsolidatedLayout layout;
  collect(td, "", layout.leaves);
  int64_t total = 0;
  for (auto& leaf : layout.leaves) {
    // A leaf starts where the previous one's padding ends; only an element wider than the padding
    // (complex128) needs more, which Python cannot view either.
    leaf.offset = round_up(total, std::max<int64_t>(kPad, leaf.tensor.element_size()));
    total = leaf.offset + round_up(static_cast<int64_t>(leaf.tensor.nbytes()), kPad);
  }
  layout.bytes = total;
  return layout;
}

TensorDict pack_consolidated(const TensorDict& td, const ConsolidatedLayout& layout,
                             const at::Tensor& flat, std::optional<at::Device> device) {
  size_t next = 0;
  TensorDict out = map_leaves(
      td,
      [&](const at::Tensor& t) {
        const ConsolidatedLayout::Leaf& leaf = layout.leaves[next++];
        at::Tensor view =
            make_view(flat, t.scalar_type(), t.sizes(), c10::contiguous_strides(t.sizes()),
                      leaf.offset / static_cast<int64_t>(t.element_size()));
        view.copy_(t.detach());  // the buffer holds data, not autograd history (Python's)
        return view;
      },
      "consolidate", device);
  detail::impl_of(out).consolidated = flat;
  return out;
}

}  // namespace detail

TensorDict TensorDict::consolidate() const {
  detail::dense_only(*this, "consolidate");
  if (is_consolidated()) return *this;
  const detail::ConsolidatedLayout layout = detail::consolidated_layout(*this);
  const auto& leaves = layout.leaves;
  const at::Device device = leaves.empty() ? at::Device(at::kCPU) : leaves[0].tensor.device();
  for (const auto& leaf : leaves) {
    if (leaf.tensor.device() != device) {
      throw TypeError("consolidate: key '" + leaf.key + "' is on " + leaf.tensor.device().str() +
                      " but key '" + leaves[0].key + "' is on " + device.str() +
                      "; all leaves must share one device");
    }
  }
  const at::Tensor flat =
      at::empty({layout.bytes}, at::TensorOptions().dtype(at::kByte).device(device));
  TensorDict out = detail::pack_consolidated(*this, layout, flat, std::nullopt);
  return out.lock_();  // Python locks a consolidated TensorDict: its entries are the buffer's
}

bool TensorDict::is_consolidated() const { return detail::consolidated_buffer(*this).defined(); }

}  // namespace tensordict
