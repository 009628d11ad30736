#include "frontend/import_types.h"

#include <utility>

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

}  // namespace tcgen
