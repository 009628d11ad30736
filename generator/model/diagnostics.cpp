#include "model/diagnostics.h"

#include <filesystem>
#include <ostream>

namespace tcgen {

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  ++error_count_;
  if (error_limit_ > 0 && error_count_ > error_limit_) {
    if (error_count_ == error_limit_ + 1) {
      items_.push_back({Diagnostic::Severity::Error, SourceLoc{loc.file, 0, 0},
                        "too many errors emitted, stopping now (--error-limit=" +
                            std::to_string(error_limit_) + ")"});
    }
    return;
  }
  items_.push_back({Diagnostic::Severity::Error, loc, std::move(message)});
}

void Diagnostics::warning(const SourceLoc& loc, std::string message) {
  items_.push_back({Diagnostic::Severity::Warning, loc, std::move(message)});
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  if (error_limit_ > 0 && error_count_ > error_limit_) return;
  items_.push_back({Diagnostic::Severity::Note, loc, std::move(message)});
}

void Diagnostics::print(std::ostream& os) const {
  for (const auto& d : items_) os << format_diagnostic(d) << "\n";
}

std::string comma_separated(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string where = d.loc.file;
  if (d.loc.line > 0) {
    where += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column);
  }
  const char* severity = d.severity == Diagnostic::Severity::Error     ? "error"
                         : d.severity == Diagnostic::Severity::Warning ? "warning"
                                                                       : "note";
  return where + ": " + severity + ": " + d.message;
}

std::string display_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path relative = fs::relative(fs::absolute(path, ec), fs::current_path(ec), ec);
  std::string text = relative.generic_string();
  if (ec || text.empty() || text.rfind("..", 0) == 0) {
    return fs::path(path).filename().generic_string();
  }
  return text;
}

}  // namespace tcgen
