// A schema written in C++: tensorclass_generate() reads it with libclang (using downstream_app's
// include directories, so torch's and the runtime's headers resolve) and generates the class
// `downstream::Sensor` into sensor.h of the build tree. This header is a schema only; code includes
// the generated header, which this directory (not on the include path) does not shadow.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "tensordict/annotate.h"

namespace downstream {

/// Readings of a batch of sensors.
struct TC_CLASS("options=frozen", "python=downstream.Sensor", "batch_dims=N") Sensor {
  /// One reading per sensor and axis.
  TC_FIELD("dtype=float32", "shape=(N, 3)") at::Tensor reading;
  TC_FIELD("default=\"imu\"") std::string kind;
  std::optional<int64_t> rate;
};

}  // namespace downstream
