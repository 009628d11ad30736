#include <ATen/ATen.h>

#include "commands.h"
#include "tensordict/dtype.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"

namespace tdtool {
namespace {

using tensordict::Json;

// Values in one of three host types; nested by `shape`.
template <class T>
Json nest(const T* data, at::IntArrayRef shape, size_t dim, int64_t& pos) {
  if (dim == shape.size()) return Json(data[pos++]);
  Json list = Json::array();
  for (int64_t i = 0; i < shape[dim]; ++i) list.push_back(nest(data, shape, dim + 1, pos));
  return list;
}

template <class T>
Json nested(const at::Tensor& flat, at::IntArrayRef shape) {
  int64_t pos = 0;
  return nest(flat.data_ptr<T>(), shape, 0, pos);
}

}  // namespace

Json tensor_to_json(const at::Tensor& t) {
  // The data nests one JSON list per dim: bounded as the loader bounds JSON it reads.
  if (t.dim() > tensordict::kMaxJsonDepth - 2) {
    throw tensordict::FormatError("a tensor of " + std::to_string(t.dim()) +
                                  " dims is deeper than tdtool prints (" +
                                  std::to_string(tensordict::kMaxJsonDepth - 2) + " dims)");
  }
  at::Tensor host = t.cpu();
  if (host.is_complex()) host = at::view_as_real(host.resolve_conj());
  const auto shape = host.sizes().vec();
  Json data;
  if (host.scalar_type() == at::kBool) {
    data = nested<bool>(host.contiguous(), shape);
  } else if (host.is_floating_point()) {
    data = nested<double>(host.to(at::kDouble).contiguous(), shape);
  } else {
    data = nested<int64_t>(host.to(at::kLong).contiguous(), shape);
  }
  Json out = Json::object();
  out["dtype"] = tensordict::dtype_name(t.scalar_type());
  out["shape"] = t.sizes().vec();
  out["data"] = std::move(data);
  return out;
}

}  // namespace tdtool
