#pragma once
// The part of Python's pickle format that tensordict's distributed metadata uses: None, bool,
// int, float, str, list, tuple and dict. Python's object collectives (send_object_list,
// broadcast_object_list, all_gather_object, scatter_object_list) move pickles, so a C++ rank
// must write and read them to share a group with a Python rank. A class reference (a nested
// tensorclass's "cls") reads as its dotted name; anything else in a received pickle (a call, an
// object's state) is a FormatError: nothing is ever imported or called.
#include <cstdint>
#include <string>
#include <string_view>

#include "tensordict/non_tensor.h"

namespace tensordict::dist::detail {

/// Writes one pickle (protocol 4 opcodes, no framing). Containers are built as Python's own
/// pickler builds them with marks: begin(), the items (dict: key then value), then end_*().
class Pickler {
 public:
  Pickler();
  Pickler& none();
  Pickler& boolean(bool value);
  Pickler& integer(int64_t value);
  Pickler& real(double value);
  Pickler& string(std::string_view value);
  /// null, booleans, numbers and strings as themselves; arrays as lists; objects as dicts.
  Pickler& json(const Json& value);
  Pickler& begin();
  Pickler& end_list();
  Pickler& end_tuple();
  Pickler& end_dict();
  /// The pickle (ends with STOP); the Pickler is spent.
  std::string finish();

 private:
  std::string out_;
};

/// Reads a pickle of the subset above into JSON (tuples and lists become arrays; dict keys must
/// be strings and keep their order). FormatError naming `what` on anything else or on a
/// truncated, cyclic or oversized pickle.
Json unpickle(std::string_view bytes, const std::string& what);

}  // namespace tensordict::dist::detail
