// The registry of generated classes (tensordict/class_registry.h) and the identity an instance's
// TensorDict carries (ClassSpec::identity), which makes a stored instance save as its class.
#include <map>
#include <mutex>

#include "core/tensordict_impl.h"
#include "tensordict/archive.h"
#include "tensordict/tensorclass.h"

namespace tensordict {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, const ClassSpec*, std::less<>> by_type;
};

// Constructed on first use: generated classes register during static initialisation.
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: registrations may outlive main's exit
  return *r;
}

}  // namespace

namespace detail::tc {

std::shared_ptr<const memmap::ClassInfo> identity_of(const char* python_type,
                                                     const std::vector<FieldSpec>& fields,
                                                     int64_t version) {
  // Every field None: a save writes null for each field the TensorDict does not hold
  // (memmap/write.cpp), which is the meta.json Python writes for the class.
  memmap::ClassInfo info{python_type, Json::object(), version};
  for (const FieldSpec& field : fields) info.fields[field.name] = nullptr;
  return std::make_shared<const memmap::ClassInfo>(std::move(info));
}

void mark_class(const TensorDict& td, const ClassSpec& spec) {
  auto& stored = detail::impl_of(td).class_info;
  if (!stored) stored = spec.identity;
}

}  // namespace detail::tc

std::string_view ClassSpec::python_name() const {
  constexpr std::string_view open = "<class '", close = "'>";
  std::string_view name = python_type;
  if (name.size() >= open.size() + close.size() && name.substr(0, open.size()) == open &&
      name.substr(name.size() - close.size()) == close) {
    name = name.substr(open.size(), name.size() - open.size() - close.size());
  }
  return name;
}

bool register_class(const ClassSpec& (*spec)()) {
  const ClassSpec& s = spec();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_type.emplace(s.python_type, &s);
  return true;
}

const ClassSpec* find_class(std::string_view python_type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.by_type.find(python_type);
  return it == r.by_type.end() ? nullptr : it->second;
}

std::vector<const ClassSpec*> registered_classes() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const ClassSpec*> out;
  out.reserve(r.by_type.size());
  for (const auto& entry : r.by_type) out.push_back(entry.second);
  return out;
}

const ClassSpec* class_of(const TensorDict& td) {
  const auto& info = detail::impl_of(td).class_info;
  return info ? find_class(info->type) : nullptr;
}

std::optional<std::string> saved_type(const std::string& prefix) {
  const memmap::Loaded loaded = archive::load_any(prefix);
  return loaded.class_info ? std::optional<std::string>(loaded.class_info->type) : std::nullopt;
}

LoadedClass load_registered(const std::string& prefix, std::optional<at::Device> device) {
  const std::optional<std::string> type = saved_type(prefix);
  if (!type) throw FormatError("'" + prefix + "' holds no tensorclass");
  const ClassSpec* spec = find_class(*type);
  if (!spec) {
    throw KeyError("'" + prefix + "' holds an instance of " + *type +
                   ", which no generated class in this program registered");
  }
  return {spec, detail::tc::load_memmap(*spec, prefix, device)};
}

}  // namespace tensordict
