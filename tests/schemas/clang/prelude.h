// What the C++ schema tests share: the annotations, and stand-ins for at::Tensor and
// tensordict::Json (nlohmann::basic_json), so the tests parse quickly (the real torch and
// nlohmann headers are read by one test).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stand_ins.h"
#include "tensordict/annotate.h"
