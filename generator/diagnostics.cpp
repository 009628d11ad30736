#include "diagnostics.h"

#include <ostream>

namespace tcgen {

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  items_.push_back({Diagnostic::Severity::Error, loc, std::move(message)});
  ++error_count_;
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  items_.push_back({Diagnostic::Severity::Note, loc, std::move(message)});
}

void Diagnostics::print(std::ostream& os) const {
  for (const auto& d : items_) os << format_diagnostic(d) << "\n";
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string where = d.loc.file;
  if (d.loc.line > 0) {
    where += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column);
  }
  const char* severity = d.severity == Diagnostic::Severity::Error ? "error" : "note";
  return where + ": " + severity + ": " + d.message;
}

}  // namespace tcgen
