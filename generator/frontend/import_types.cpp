#include "frontend/import_types.h"

#include <utility>

#include "model/kinds.h"

namespace tcgen {

std::vector<std::string> batch_dim_names(size_t rank) {
  if (rank == 1) return {"N"};
  if (rank == 2) return {"B", "N"};
  std::vector<std::string> names;
  for (size_t i = 0; i < rank; ++i) names.push_back("B" + std::to_string(i));
  return names;
}

Type make_type(TypeKind kind) {
  Type type;
  type.kind = kind;
  return type;
}

Type wrap(TypeKind kind, Type element) {
  Type type = make_type(kind);
  type.args.push_back(std::move(element));
  return type;
}

bool same_type(const Type& a, const Type& b) { return type_to_string(a) == type_to_string(b); }

Type merge_types(const Type& a, const Type& b) {
  if (same_type(a, b)) return a;
  if (a.kind == TypeKind::Tensor && b.kind == TypeKind::Tensor) {
    Type t = make_type(TypeKind::Tensor);
    if (a.dtype == b.dtype) t.dtype = a.dtype;
    if (a.shape && b.shape && *a.shape == *b.shape) t.shape = a.shape;
    return t;
  }
  if (a.kind == TypeKind::List && b.kind == TypeKind::List) {
    return wrap(TypeKind::List, merge_types(a.args.at(0), b.args.at(0)));
  }
  return make_type(TypeKind::Any);
}

}  // namespace tcgen
