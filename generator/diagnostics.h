#pragma once
// Collects every problem of a run, so a user sees them all at once, in gcc's format:
// `file:line:col: error: message`, optionally followed by `file:line:col: note: message` lines.

#include <iosfwd>
#include <string>
#include <vector>

#include "model.h"

namespace tcgen {

struct Diagnostic {
  enum class Severity { Error, Note };
  Severity severity;
  SourceLoc loc;
  std::string message;
};

class Diagnostics {
 public:
  void error(const SourceLoc& loc, std::string message);
  /// Attaches a note to the latest error ("previously defined here").
  void note(const SourceLoc& loc, std::string message);

  bool has_errors() const { return error_count_ > 0; }
  const std::vector<Diagnostic>& all() const { return items_; }
  /// Prints every diagnostic, one per line.
  void print(std::ostream& os) const;

 private:
  std::vector<Diagnostic> items_;
  int error_count_ = 0;
};

std::string format_diagnostic(const Diagnostic& diagnostic);

}  // namespace tcgen
