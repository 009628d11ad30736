#include "frontend/import_types.h"

#include <cctype>
#include <utility>

#include "model/kinds.h"
#include "model/name_rules.h"

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

std::string pascal_case(const std::string& text) {
  std::string out;
  bool word_start = true;
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      word_start = true;
      continue;
    }
    out += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    word_start = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front()))) out = "Model" + out;
  return out;
}

KeyTree::Entry* KeyTree::Level::find(const std::string& key) {
  const auto it = position.find(key);
  return it == position.end() ? nullptr : &entries[it->second];
}

KeyTree::Entry& KeyTree::Level::append(Entry entry) {
  position.emplace(entry.key, entries.size());
  entries.push_back(std::move(entry));
  return entries.back();
}

KeyTree::KeyTree(std::string display, Diagnostics& diagnostics)
    : display_(std::move(display)), diagnostics_(diagnostics), levels_(1) {}

void KeyTree::add(const tensordict::NestedKey& key, const Type& type, bool input) {
  size_t level = 0;
  for (size_t i = 0; i < key.size(); ++i) {
    const bool last = i + 1 == key.size();
    Entry* entry = levels_[level].find(key[i]);
    if (!entry) {
      Entry fresh{key[i], std::nullopt, input, 0};
      if (last) {
        fresh.tensor = type;
      } else {
        fresh.child = levels_.size();
        levels_.emplace_back();
      }
      entry = &levels_[level].append(std::move(fresh));
    } else if (last != entry->tensor.has_value()) {
      diagnostics_.error(SourceLoc{display_, 0, 0},
                         "'" + key.join(".") + "' is both a tensor and a dict of tensors");
      return;
    }
    entry->input = entry->input || input;
    if (!last) level = entry->child;
  }
}

std::vector<Class> KeyTree::classes(const std::string& name,
                                    const std::vector<std::string>& batch_dims) {
  std::vector<Class> out;
  emit(0, name, batch_dims, out);
  return out;
}

void KeyTree::emit(size_t level, const std::string& name,
                   const std::vector<std::string>& batch_dims, std::vector<Class>& out) {
  const size_t index = out.size();
  out.emplace_back();
  out[index].name = name;
  out[index].batch_dims = batch_dims;
  out[index].loc = SourceLoc{display_, 0, 0};
  for (const auto& entry : levels_[level].entries) {
    Field field;
    field.name = entry.key;
    field.loc = out[index].loc;
    if (entry.tensor) {
      field.type = *entry.tensor;
    } else {
      field.type = make_type(TypeKind::Class);
      field.type.class_name = name + pascal_case(entry.key);
      emit(entry.child, field.type.class_name, batch_dims, out);
    }
    if (!entry.input) field.type = wrap(TypeKind::Optional, field.type);
    if (is_reserved_name(field.name)) out[index].options.shadow = true;
    out[index].fields.push_back(std::move(field));
  }
}

}  // namespace tcgen
