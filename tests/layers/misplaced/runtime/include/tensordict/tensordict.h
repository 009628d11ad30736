#pragma once
// Fixture for check_header_map.cmake: a TensorDict whose map is wrong in every way it checks.
namespace tensordict {

class TensorDict {
 public:
  TensorDict();
  // ---- entries (core/entries.cpp) --------------------------------------------------------------
  /// Defined in its section's file: not reported.
  int get(int key) const;
  /// Defined in the ops file: reported.
  int clone() const;
  /// Defined here: not reported.
  int size() const { return 0; }

#include "tensordict/members/shape.inc"

  // ---- a banner without its file ---------------------------------------------------------------
  int reshape(int shape) const;

 private:
  int hidden() const;
};

}  // namespace tensordict
