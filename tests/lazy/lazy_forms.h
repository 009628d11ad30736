#pragma once
// The lazy form of every public TensorDict member, in one table. The runtime keeps lazy stacks as
// a second form of TensorDict (runtime/src/lazy/), so an op's lazy form is written apart from its
// dense one and could be forgotten; this table is how it cannot be:
//  - test_contract fails when TensorDict declares a public member the table does not list;
//  - test_lazy runs every Same entry on a lazy stack and on its dense twin (same results) and
//    every Refused entry on a lazy stack (a TypeError naming LazyStackedTensorDict).
// A new op therefore comes with its lazy form, or with a tested refusal.
#include <functional>
#include <string>
#include <vector>

#include "tensordict/tensordict.h"

namespace lazy_forms {

enum class Form {
  Same,     ///< the op on a lazy stack gives what it gives on the dense stack
  Refused,  ///< the op throws TypeError on a lazy stack (densify() first)
  NotAnOp,  ///< not an op on a TensorDict's content (constructors, iterators, static makers)
};

struct Entry {
  const char* member;  ///< the member's name as declared in TensorDict
  Form form;
  /// Runs the op on `td` and describes its result (Same, Refused); empty for NotAnOp.
  std::function<std::string(tensordict::TensorDict)> run;
};

/// Every public member of tensordict::TensorDict, one entry per name.
const std::vector<Entry>& entries();

}  // namespace lazy_forms
