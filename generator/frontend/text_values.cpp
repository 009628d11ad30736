#include "frontend/text_values.h"

#include <algorithm>
#include <vector>

namespace tcgen {

void add_option(const std::string& name, const SourceLoc& loc, Options& options,
                Diagnostics& diagnostics) {
  const auto& rows = tensordict::kClassOptions;
  const auto known =
      std::find_if(rows.begin(), rows.end(), [&](const auto& row) { return row.name == name; });
  if (known == rows.end()) {
    std::vector<std::string> names;
    for (const auto& row : rows) names.emplace_back(row.name);
    diagnostics.error(loc,
                      "unknown option '" + name + "' (allowed: " + comma_separated(names) + ")");
    return;
  }
  const auto option = known->option;
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
