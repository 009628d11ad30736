// Every C++ type tcgen maps; types.yaml is the same schema in YAML.
#include "prelude.h"

namespace sim {

/** Settings
 *  of a run. */
struct TC_CLASS() Settings {
  TC_FIELD("default=0.5") double rate;
};

/// A batch of particles.
struct TC_CLASS("options=frozen", "python=mypkg.sim.Particles", "batch_dims=N",
                "cpp_includes=<cstdint>, sim/mass.h") Particles {
  /// Positions.
  TC_FIELD("dtype=float32", "shape=(N, 3)") at::Tensor pos;
  TC_FIELD("dtype=float32", "default=null") std::optional<torch::Tensor> mass;
  TC_FIELD("default=\"unnamed\"", "doc=A label.") std::string label;
  int64_t count;
  TC_FIELD("default=3") int small;
  double ratio;
  float scale;
  TC_FIELD("default=true") bool flag;
  TC_FIELD("default=[\"a\", \"b\"]") std::vector<std::string> tags;
  std::vector<double> weights;
  tensordict::Json extra;
  std::optional<tensordict::TensorDict> extras;
  std::optional<int64_t> maybe;
  Settings settings;
  std::optional<Settings> more;

  // Hand-written members (YAML's methods:), declared only.
  double total_mass() const;
  static Particles from_json(const tensordict::Json& json, int64_t n = 2);
};

}  // namespace sim
