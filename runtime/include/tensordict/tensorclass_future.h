#pragma once
/// \file
/// TensorClassFuture: the typed result of a tensorclass's background memmap.

#include "tensordict/tensordict.h"

namespace tensordict {

/// The instance a background memmap will give (Python's memmap(return_early=True)): get() waits
/// and returns it (or rethrows the write's error), once.
template <class T>
class TensorClassFuture {
 public:
  /// Wraps the future of the instance's TensorDict.
  explicit TensorClassFuture(TensorDictFuture inner) : inner_(std::move(inner)) {}
  /// Waits for the write and returns the memory-mapped instance (rethrows the write's error).
  T get() { return T::from_tensordict(inner_.get(), {}, false); }
  /// Waits for the write without consuming the result.
  void wait() const { inner_.wait(); }
  /// False once get() has been called.
  bool valid() const { return inner_.valid(); }

 private:
  TensorDictFuture inner_;
};

}  // namespace tensordict
