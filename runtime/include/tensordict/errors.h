#pragma once
/// \file
/// Exception types of the runtime. Every message names the key (or path) involved and, for shape or
/// dtype problems, the expected and the actual value, so a user can act on it without a debugger.

#include <stdexcept>
#include <string>

namespace tensordict {

/// Base of every exception the runtime throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A key that does not exist (or already exists where it must not).
class KeyError : public Error {
 public:
  using Error::Error;
};

/// An index out of range (Python's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

/// A shape or batch-size mismatch.
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// An entry of the wrong kind or dtype (e.g. a nested TensorDict where a tensor was expected).
class TypeError : public Error {
 public:
  using Error::Error;
};

/// An argument of the right type whose value the operation cannot take (Python's ValueError):
/// an unknown name, an empty list where items are needed, text a parser cannot read.
class ValueError : public Error {
 public:
  using Error::Error;
};

/// A modification of a locked TensorDict (adding, removing or renaming keys).
class LockedError : public Error {
 public:
  using Error::Error;
};

/// A wait that did not end within its bound (a distributed operation, a batch runner request).
class TimeoutError : public Error {
 public:
  using Error::Error;
};

/// Bad on-disk data: missing, truncated or malformed files, unknown dtypes, unsafe paths.
class FormatError : public Error {
 public:
  using Error::Error;
};

}  // namespace tensordict
