#include "check/cycles.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "model/output_names.h"

namespace tcgen {
namespace {

// "`from` holds `to`": through a field (optional or not) or as its base.
struct Edge {
  const Class* to;
  bool optional;
  bool base;
  SourceLoc loc;
};

std::vector<Edge> edges_of(const Class& cls, const ClassIndex& classes) {
  std::vector<Edge> out;
  const auto base = classes.find(cls.base);
  if (!cls.base.empty() && base != classes.end())
    out.push_back({base->second, false, true, cls.base_loc});
  for (const auto& field : cls.fields) {
    const auto nested = classes.find(nested_class_name(field.type));
    if (nested == classes.end()) continue;
    out.push_back({nested->second, is_optional(field.type), false, field.type.loc});
  }
  return out;
}

class CycleCheck {
 public:
  CycleCheck(const ClassIndex& classes, Diagnostics& diagnostics)
      : classes_(classes), diagnostics_(diagnostics) {
    for (const auto& [name, cls] : classes) edges_[cls] = edges_of(*cls, classes);
  }

  // Depth-first over required fields only: any cycle there has no end. (A derived class holds
  // copies of its base's fields, so a cycle through a base shows as one through fields; a cycle
  // of bases alone is inherit.cpp's.)
  void required_cycles() {
    std::set<const Class*> done;
    std::vector<const Class*> path;
    std::function<void(const Class*)> visit = [&](const Class* cls) {
      if (done.count(cls)) return;
      path.push_back(cls);
      for (const Edge& edge : edges_[cls]) {
        if (edge.optional || edge.base) continue;
        const auto on_path = std::find(path.begin(), path.end(), edge.to);
        if (on_path == path.end()) {
          visit(edge.to);
          continue;
        }
        std::string chain;
        for (auto it = on_path; it != path.end(); ++it) chain += (*it)->name + " -> ";
        diagnostics_.error(edge.loc, "nesting cycle: " + chain + edge.to->name +
                                         " (a class cannot contain itself: a field of the cycle "
                                         "must be optional, where an instance ends)");
      }
      path.pop_back();
      done.insert(cls);
    };
    for (const auto& [name, cls] : classes_) visit(cls);
  }

  // Tarjan's strongly connected components over every edge; the classes of one component must
  // share a header and a Python module.
  void components_in_one_place() {
    for (const auto& [name, cls] : classes_) {
      if (!index_.count(cls)) strong_connect(cls);
    }
  }

 private:
  void strong_connect(const Class* cls) {
    index_[cls] = low_[cls] = next_index_++;
    stack_.push_back(cls);
    for (const Edge& edge : edges_[cls]) {
      if (!index_.count(edge.to)) {
        strong_connect(edge.to);
        low_[cls] = std::min(low_[cls], low_[edge.to]);
      } else if (std::find(stack_.begin(), stack_.end(), edge.to) != stack_.end()) {
        low_[cls] = std::min(low_[cls], index_[edge.to]);
      }
    }
    if (low_[cls] != index_[cls]) return;
    std::vector<const Class*> component;
    for (const Class* member = nullptr; member != cls;) {
      member = stack_.back();
      stack_.pop_back();
      component.push_back(member);
    }
    check_component(component);
  }

  void check_component(const std::vector<const Class*>& component) {
    const auto place = [](const Class& c) { return c.schema_path; };
    const auto module = [](const Class& c) { return python_module(c); };
    if (!split(component, place,
               "schema files (their headers would include each other; declare them in one "
               "schema file)")) {
      split(component, module,
            "Python modules (their modules would import each other; give them one `python` "
            "module)");
    }
  }

  // Reports the first edge of `component` that leaves `where` its class lies in, if any.
  bool split(const std::vector<const Class*>& component,
             const std::function<std::string(const Class&)>& where, const std::string& why) {
    for (const Class* cls : component) {
      for (const Edge& edge : edges_[cls]) {
        const bool inside =
            std::find(component.begin(), component.end(), edge.to) != component.end();
        if (!inside || where(*edge.to) == where(*cls)) continue;
        diagnostics_.error(edge.loc, "classes '" + cls->name + "' (" + where(*cls) + ") and '" +
                                         edge.to->name + "' (" + where(*edge.to) +
                                         ") hold each other across " + why);
        return true;
      }
    }
    return false;
  }

  const ClassIndex& classes_;
  Diagnostics& diagnostics_;
  std::map<const Class*, std::vector<Edge>> edges_;
  std::map<const Class*, int> index_, low_;
  std::vector<const Class*> stack_;
  int next_index_ = 0;
};

}  // namespace

void check_nesting_cycles(const ClassIndex& classes, Diagnostics& diagnostics) {
  CycleCheck check(classes, diagnostics);
  check.required_cycles();
  check.components_in_one_place();
}

}  // namespace tcgen
