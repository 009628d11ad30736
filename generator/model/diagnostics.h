#pragma once
// Collects every problem of a run, so a user sees them all at once, in gcc's format:
// `file:line:col: error: message`, optionally followed by `file:line:col: note: message` lines;
// warnings (`file:line:col: warning: message`) do not fail a run.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace tcgen {

struct Diagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity;
  SourceLoc loc;
  std::string message;
};

/// Like compilers' -ferror-limit: errors past the limit are counted, not kept, and one closing
/// "too many errors" error is kept instead, so hostile input cannot fill memory or the terminal.
constexpr int kDefaultErrorLimit = 50;

class Diagnostics {
 public:
  /// `error_limit` 0 keeps every error.
  explicit Diagnostics(int error_limit = kDefaultErrorLimit) : error_limit_(error_limit) {}

  void error(const SourceLoc& loc, std::string message);
  /// Legal input that probably does not do what its author wants; the run still succeeds.
  void warning(const SourceLoc& loc, std::string message);
  /// Attaches a note to the latest error ("previously defined here"); dropped with that error.
  void note(const SourceLoc& loc, std::string message);

  bool has_errors() const { return error_count_ > 0; }
  /// Whether another error would be kept (not past the limit): work on its message is not lost.
  bool keeps_errors() const { return error_limit_ == 0 || error_count_ < error_limit_; }
  /// Every diagnostic kept, in the order of the files (as they first appear), then of lines and
  /// columns, stable, each with its notes; the "too many errors" error last. The checks run stage
  /// by stage, so they report out of line order.
  std::vector<Diagnostic> all() const;
  /// Prints all(), one per line.
  void print(std::ostream& os) const;

 private:
  std::vector<Diagnostic> items_;  // as reported
  std::optional<Diagnostic> too_many_;
  int error_limit_;
  int error_count_ = 0;
};

std::string format_diagnostic(const Diagnostic& diagnostic);

/// `words` as messages list them ("a, b, c"), e.g. after "allowed: ".
std::string comma_separated(const std::vector<std::string>& words);

/// The candidate closest to the misspelt `word`, for a "did you mean" hint: at most one edit (a
/// letter added, removed, changed, or two swapped) per three letters of `word`, and at most two;
/// the first of the closest; "" when none is that close (always for words under three letters).
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

/// `path` as messages and generated stamps show it: relative to the working directory and
/// '/'-separated (its file name alone when it lies outside), so output does not depend on the
/// machine.
std::string display_path(const std::string& path);

}  // namespace tcgen
