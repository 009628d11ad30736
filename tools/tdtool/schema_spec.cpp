#include "schema_spec.h"

#include <array>
#include <deque>
#include <map>
#include <utility>

#include "model/field_spec.h"
#include "model/output_names.h"
#include "tensordict/dtype.h"
#include "tensordict/errors.h"

namespace tdtool {
namespace {

using tensordict::ClassSpec;
using tensordict::FieldSpec;

// FieldSpec::nested is a function pointer without state: slot I of a fixed table of specs is read
// by its own function.
constexpr size_t kMaxSpecs = 1024;

std::deque<ClassSpec>& specs() {
  static std::deque<ClassSpec> table;
  return table;
}
std::map<std::string, size_t>& index() {
  static std::map<std::string, size_t> by_name;
  return by_name;
}
// The names the specs point at (ClassSpec and FieldSpec hold `const char*`).
const char* keep(std::string text) {
  static std::deque<std::string> texts;
  return texts.emplace_back(std::move(text)).c_str();
}

template <size_t I>
const ClassSpec& spec_at() {
  return specs()[I];
}
template <size_t... I>
constexpr std::array<const ClassSpec& (*)(), sizeof...(I)> spec_getters(std::index_sequence<I...>) {
  return {&spec_at<I>...};
}
constexpr auto kGetters = spec_getters(std::make_index_sequence<kMaxSpecs>());

FieldSpec field_spec(const tcgen::Field& field) {
  const tcgen::FieldSpecFacts facts = tcgen::field_spec_facts(field);
  FieldSpec spec(keep(field.name), facts.kind);
  spec.optional = facts.optional;
  if (!facts.nested_class.empty()) spec.nested = kGetters.at(index().at(facts.nested_class));
  if (facts.dtype) spec.dtype = tensordict::dtype_from_name(*facts.dtype);
  spec.shape = facts.shape;
  if (facts.default_json) spec.default_json = keep(*facts.default_json);
  for (const auto& old : facts.old_names) spec.old_names.push_back(keep(old));
  spec.deprecated = facts.deprecated;
  return spec;
}

}  // namespace

SchemaSpecs::SchemaSpecs(const tcgen::ClassIndex& classes) {
  if (!specs().empty()) throw tensordict::Error("tdtool: one schema per process");
  if (classes.size() > kMaxSpecs) {
    throw tensordict::Error("tdtool: the schema has " + std::to_string(classes.size()) +
                            " classes, more than the " + std::to_string(kMaxSpecs) +
                            " verify reads");
  }
  // Every class's slot first: a field may name a class declared after its own.
  for (const auto& [name, cls] : classes) {
    index().emplace(name, specs().size());
    specs().push_back(ClassSpec{keep(cls->name),
                                keep(tcgen::python_type_string(*cls)),
                                static_cast<const tensordict::ClassOptions&>(cls->options),
                                {},
                                cls->version});
  }
  for (const auto& [name, cls] : classes) {
    ClassSpec& spec = specs()[index().at(name)];
    for (const auto& field : cls->fields) spec.fields.push_back(field_spec(field));
  }
}

const ClassSpec& SchemaSpecs::of(const std::string& name) const {
  return specs()[index().at(name)];
}

}  // namespace tdtool
