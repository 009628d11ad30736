// tensorclass_generate() with a schema written in C++ (tests/downstream/schemas/sensor.h), in
// this build: the class is generated from the annotated struct and behaves as its YAML twin would.
#include <ATen/ATen.h>

#include <iostream>

#include "sensor.h"

int main() {
  downstream::Sensor sensor({at::ones({2, 3})}, {2});
  const bool ok = sensor.kind() == "imu" && !sensor.rate() && sensor.batch_size()[0] == 2 &&
                  downstream::Sensor::class_spec().options.frozen;
  std::cout << (ok ? "OK" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
