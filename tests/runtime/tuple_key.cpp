// Python's nested key `td["a", "b"]` written as is in C++ is the comma operator, i.e. td["b"]: with
// warnings as errors the build refuses it (the spelling:tuple_key_refused test expects exactly that
// diagnostic). The C++ spelling is td[{"a", "b"}].
#include "tensordict/tensordict.h"

at::Tensor python_spelling(const tensordict::TensorDict& td) { return td["a", "b"]; }
