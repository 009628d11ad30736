#pragma once
/// \file
/// TensorDictFuture: the TensorDict a background operation (memmap_async) gives.
/// tensordict.h includes this header.

#include <memory>
#include <utility>

namespace tensordict {

class TensorDict;

/// The TensorDict a background operation (memmap_async) will give; like std::future, without
/// making every includer pay for `<future>`.
class TensorDictFuture {
 public:
  /// Waits for the operation, then returns its TensorDict (or rethrows its error); once.
  TensorDict get();
  /// Waits for the operation without taking its result.
  void wait() const;
  /// False after get().
  bool valid() const;

  struct State;  ///< the std::future (memmap/td.cpp)
  /// Wraps the operation's state (made by the runtime).
  explicit TensorDictFuture(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace tensordict
