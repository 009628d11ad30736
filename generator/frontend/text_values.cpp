#include "frontend/text_values.h"

#include <algorithm>
#include <vector>

namespace tcgen {

void add_option(const std::string& name, const SourceLoc& loc, Options& options,
                Diagnostics& diagnostics) {
  const auto& names = tensordict::kClassOptionNames;
  const auto known = std::find(names.begin(), names.end(), name);
  if (known == names.end()) {
    diagnostics.error(
        loc, "unknown option '" + name + "' (allowed: " +
                 comma_separated(std::vector<std::string>(names.begin(), names.end())) + ")");
    return;
  }
  const auto option = static_cast<tensordict::ClassOption>(known - names.begin());
  if (options.has(option)) {
    diagnostics.error(loc, "option '" + name + "' given twice");
  } else {
    static_cast<tensordict::ClassOptions&>(options) = options.with(option);
  }
}

int64_t read_version(const std::string& text, const SourceLoc& loc, Diagnostics& diagnostics) {
  int64_t version = 0;
  const bool digits =
      !text.empty() && text.size() <= 9 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) version = std::stoll(text);
  if (version < 1) {
    diagnostics.error(loc, "version '" + text + "' is not a positive integer (like 1, 2, 3)");
    return 0;
  }
  return version;
}

}  // namespace tcgen
