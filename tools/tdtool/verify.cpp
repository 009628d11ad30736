// tdtool verify: every meta.json parsed and every data file checked, all problems listed.
#include <ostream>

#include "commands.h"
#include "tensordict/memmap.h"

namespace tdtool {

int run_verify(const std::string& dir, std::ostream& out) {
  const auto problems = tensordict::memmap::verify(dir);
  for (const auto& problem : problems) out << "problem: " << problem << "\n";
  if (problems.empty()) {
    out << dir << ": OK\n";
    return 0;
  }
  out << dir << ": " << problems.size() << " problem(s)\n";
  return 1;
}

}  // namespace tdtool
