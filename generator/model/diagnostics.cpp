#include "model/diagnostics.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <tuple>

namespace tcgen {

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  ++error_count_;
  if (error_limit_ > 0 && error_count_ > error_limit_) {
    if (error_count_ == error_limit_ + 1) {
      too_many_ = Diagnostic{Diagnostic::Severity::Error, SourceLoc{loc.file, 0, 0},
                             "too many errors emitted, stopping now (--error-limit=" +
                                 std::to_string(error_limit_) + ")"};
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

std::vector<Diagnostic> Diagnostics::all() const {
  struct Group {  // an error or warning and the notes after it: items_[begin, end)
    size_t file, begin, end;
  };
  std::map<std::string, size_t> file_rank;
  std::vector<Group> groups;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].severity == Diagnostic::Severity::Note && !groups.empty()) {
      groups.back().end = i + 1;
      continue;
    }
    const size_t rank = file_rank.emplace(items_[i].loc.file, file_rank.size()).first->second;
    groups.push_back({rank, i, i + 1});
  }
  std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
    const SourceLoc &x = items_[a.begin].loc, &y = items_[b.begin].loc;
    return std::tie(a.file, x.line, x.column) < std::tie(b.file, y.line, y.column);
  });
  std::vector<Diagnostic> out;
  out.reserve(items_.size() + 1);
  for (const Group& g : groups)
    out.insert(out.end(), items_.begin() + g.begin, items_.begin() + g.end);
  if (too_many_) out.push_back(*too_many_);
  return out;
}

void Diagnostics::print(std::ostream& os) const {
  for (const auto& d : all()) os << format_diagnostic(d) << "\n";
}

std::string comma_separated(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

namespace {

// Edits from `a` to `b`: a letter inserted, deleted or substituted, or two adjacent letters
// swapped (Damerau's optimal string alignment distance); `most + 1` when there are more than
// `most`. Only the cells within `most` of the table's diagonal are computed (a cell farther off
// is more than `most` edits), so the cost is linear in the length. `d` is scratch space.
size_t edit_distance(const std::string& a, const std::string& b, size_t most,
                     std::vector<size_t>& d) {
  const size_t far = most + 1, width = b.size() + 1;
  d.resize((a.size() + 1) * width);
  const auto at = [&](size_t i, size_t j) -> size_t& { return d[i * width + j]; };
  for (size_t i = 0; i <= a.size(); ++i) {
    const size_t first = i > most ? i - most : 0, last = std::min(b.size(), i + most);
    if (first > 0) at(i, first - 1) = far;  // read by the cell right of it
    for (size_t j = first; j <= last; ++j) {
      if (i == 0 || j == 0) {
        at(i, j) = i + j;
        continue;
      }
      at(i, j) = std::min(
          {at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
    if (last < b.size()) at(i, last + 1) = far;  // read by the cell below it
  }
  return std::min(far, at(a.size(), b.size()));
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  // Short words are close to many others: "Foo" is two edits from "bool", "B" one from "A".
  const size_t most = std::min<size_t>(2, word.size() / 3);
  constexpr size_t kLongest = 64;  // the table is as large as the product of the lengths
  std::string best;
  if (most == 0 || word.size() > kLongest) return best;
  size_t best_distance = most + 1;
  std::vector<size_t> scratch;
  for (const auto& candidate : candidates) {
    const size_t length_gap =
        std::max(candidate.size(), word.size()) - std::min(candidate.size(), word.size());
    if (candidate == word || length_gap > most) continue;
    const size_t distance = edit_distance(word, candidate, most, scratch);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
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
