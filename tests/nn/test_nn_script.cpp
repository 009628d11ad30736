// TorchScript and TensorDicts: the IValue conversion table both ways (and what it refuses),
// TensorDictModule over dict and positional forwards, and TorchScript parameters as TensorDicts
// (from_module, to_module, scoped swaps, memmap checkpoints, ensembles). The modules are built
// and scripted here, in C++.
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "nn_test_util.h"
#include "tensordict/nn/script.h"

#include <filesystem>

using namespace tensordict;
using nn_test::same;
using namespace tensordict::nn;
using Catch::Matchers::ContainsSubstring;

namespace {

// Outputs of different calls of one TorchScript module agree to rounding only: from the second
// call on, libtorch 2.x runs the profiled graph fused (TensorExpr), whose float results may differ
// from the first, interpreted call's in the last bit.
bool same_to_rounding(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.allclose(b, 1e-6, 1e-6);
}

// forward(td: Dict[str, Tensor]) -> Dict[str, Tensor], over a submodule "body" with a weight
// and a buffer.
torch::jit::Module dict_policy() {
  torch::jit::Module body("Body");
  body.register_parameter("weight", at::randn({4, 2}), false);
  body.register_buffer("shift", at::full({2}, 0.5));
  body.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.matmul(x, self.weight) + self.shift
)");
  torch::jit::Module policy("Policy");
  policy.register_module("body", body);
  policy.register_parameter("gain", at::ones({1}), false);
  policy.define(R"(
def forward(self, td: Dict[str, Tensor]) -> Dict[str, Tensor]:
    logits = self.body.forward(td["obs"]) * self.gain
    out: Dict[str, Tensor] = {}
    out["logits"] = logits
    out["action"] = torch.argmax(logits, -1)
    return out
)");
  policy.eval();
  return policy;
}

// forward(x, scale) -> Tuple[Tensor, Tensor].
torch::jit::Module tuple_mlp() {
  torch::jit::Module mlp("Mlp");
  mlp.register_parameter("weight", at::randn({4, 3}), false);
  mlp.define(R"(
def forward(self, x: Tensor, scale: Tensor) -> Tuple[Tensor, Tensor]:
    y = torch.matmul(x, self.weight) * scale
    return y, y.sum(-1)
)");
  return mlp;
}

at::Tensor policy_logits(const torch::jit::Module& policy, const at::Tensor& obs) {
  const at::Tensor weight = policy.attr("body").toModule().attr("weight").toTensor();
  const at::Tensor shift = policy.attr("body").toModule().attr("shift").toTensor();
  return (at::matmul(obs, weight) + shift) * policy.attr("gain").toTensor();
}

// forward(x, scale: Optional[Tensor] = None, shift: float = 1.0) -> x * scale + shift.
torch::jit::Module scaled_module() {
  torch::jit::Module scaled("Scaled");
  scaled.define(R"(
def forward(self, x: Tensor, scale: Optional[Tensor] = None, shift: float = 1.0) -> Tensor:
    if scale is None:
        return x + shift
    return x * scale + shift
)");
  return scaled;
}

}  // namespace

TEST_CASE("to_ivalue makes typed dicts, from_ivalue gives the TensorDict back", "[nn][ivalue]") {
  TensorDict flat({{"a", at::randn({3, 2})}, {"b", at::arange(3)}}, {3});
  c10::IValue dict = to_ivalue(flat);
  CHECK(dict.type()->str() == "Dict(str, Tensor)");
  TensorDict back = from_ivalue(dict, {3});
  CHECK(back.keys() == flat.keys());
  CHECK(same(back.get("a"), flat.get("a")));
  CHECK(back.get("a").is_same(flat.get("a")));  // no copies

  TensorDict nested({{"x", TensorDict({{"y", at::zeros({3})}}, {3})}}, {3});
  CHECK(to_ivalue(nested).type()->str() == "Dict(str, Dict(str, Tensor))");
  nested.set("z", at::ones({3}));
  CHECK(to_ivalue(nested).type()->str() == "Dict(str, Any)");
  TensorDict nested_back = from_ivalue(to_ivalue(nested), {3});
  CHECK(nested_back.get_tensordict("x").batch_size() == BatchSize{3});
  CHECK((nested_back == nested).all());
}

TEST_CASE("non-tensor data converts as the table says", "[nn][ivalue]") {
  TensorDict td({}, {2});
  td.set_non_tensor("name", "cartpole");
  td.set_non_tensor("steps", 7);
  td.set_non_tensor("gamma", 0.99);
  td.set_non_tensor("done", true);
  td.set_non_tensor("sizes", Json::array({1, 2, 3}));
  td.set_non_tensor("mixed", Json::array({1, 2.5}));
  td.set_non_tensor("words", Json::array({"a", "b"}));
  td.set_non_tensor("grid", Json::array({Json::array({1, 2}), Json::array({3, 4})}));
  td.set_non_tensor("nothing", nullptr);
  c10::IValue dict = to_ivalue(td);
  auto generic = dict.toGenericDict();
  CHECK(generic.at("name").toStringRef() == "cartpole");
  CHECK(generic.at("steps").toInt() == 7);
  CHECK(generic.at("gamma").toDouble() == 0.99);
  CHECK(generic.at("done").toBool());
  CHECK(generic.at("sizes").type()->str() == "int[]");
  CHECK(generic.at("mixed").type()->str() == "float[]");
  CHECK(generic.at("words").type()->str() == "str[]");
  CHECK(generic.at("grid").type()->str() == "int[][]");
  CHECK(generic.at("nothing").isNone());

  TensorDict back = from_ivalue(dict, {2});
  for (const char* key : {"name", "steps", "gamma", "done", "sizes", "words", "grid", "nothing"}) {
    INFO(key);
    CHECK(back.get_non_tensor(key) == td.get_non_tensor(key));
  }
  CHECK(back.get_non_tensor("mixed") == Json::array({1.0, 2.5}));

  // A NonTensorStack goes as its nested list.
  TensorDict stacked({{"tag", NonTensorStack({2}, {"x", "y"})}}, {2});
  CHECK(to_ivalue(stacked).toGenericDict().at("tag").type()->str() == "str[]");
}

TEST_CASE("what has no TorchScript value, or no TensorDict value, is a TypeError naming the key",
          "[nn][ivalue]") {
  TensorDict td({}, {});
  td.set_non_tensor({"cfg", "opts"}, Json::object({{"lr", 0.1}}));
  CHECK_THROWS_AS(to_ivalue(td), TypeError);
  CHECK_THROWS_WITH(to_ivalue(td),
                    "key ('cfg', 'opts'): a JSON object has no TorchScript value "
                    "(str, int, float, bool, None or lists)");

  CHECK_THROWS_WITH(from_ivalue(c10::IValue(at::ones({2}))), "from_ivalue: a Tensor is not a dict");
  c10::impl::GenericDict int_keys(c10::IntType::get(), c10::TensorType::get());
  int_keys.insert(1, at::ones({1}));
  CHECK_THROWS_WITH(from_ivalue(int_keys), "from_ivalue: a dict key of type int is not a str");

  c10::impl::GenericDict odd(c10::StringType::get(), c10::AnyType::get());
  odd.insert("pair", c10::ivalue::Tuple::create({c10::IValue(1), c10::IValue(2)}));
  CHECK_THROWS_WITH(from_ivalue(odd), ContainsSubstring("key 'pair': a (int, int) is not data"));
  c10::impl::GenericDict tensors(c10::StringType::get(), c10::AnyType::get());
  tensors.insert("parts", c10::List<at::Tensor>({at::ones({1})}));
  CHECK_THROWS_WITH(from_ivalue(tensors), ContainsSubstring("key 'parts': a Tensor is not data"));

  // Entries must fit the batch size they go into.
  c10::impl::GenericDict rows(c10::StringType::get(), c10::TensorType::get());
  rows.insert("x", at::ones({3}));
  CHECK_THROWS_AS(from_ivalue(rows, {4}), ShapeError);
}

TEST_CASE("a TorchScript dict-in/dict-out forward runs as a TensorDictModule", "[nn][script]") {
  torch::jit::Module policy = dict_policy();
  TensorDictModule actor(policy, {"obs"}, {"logits", "action"});
  CHECK(actor.name() == "Policy");
  TensorDict td({{"obs", at::randn({5, 4})}}, {5});
  actor(td);
  const at::Tensor logits = policy_logits(policy, td.get("obs"));
  CHECK(td.get("logits").allclose(logits));
  CHECK(same(td.get("action"), logits.argmax(-1)));

  TensorDictModule asks_more(policy, {"obs"}, {"logits", "value"}, "policy");
  CHECK_THROWS_AS(asks_more(td), KeyError);
  CHECK_THROWS_WITH(asks_more(td), "forward of Policy returned no out_key 'value'");

  // The dict the in_keys make must be the type forward takes.
  td.set_non_tensor("task", "walk");
  TensorDictModule with_text(policy, {"obs", "task"}, {"logits"});
  CHECK_THROWS_AS(with_text(td), TypeError);
  CHECK_THROWS_WITH(with_text(td),
                    "forward of Policy takes Dict(str, Tensor), but the in_keys "
                    "make a Dict(str, Any)");
}

TEST_CASE("a TorchScript error names the module, and numbers returned are tensors as in Python",
          "[nn][script]") {
  torch::jit::Module checker("Checker");
  checker.define(R"(
def forward(self, x: Tensor) -> int:
    return torch.matmul(x, torch.ones(2, 1)).size(0)
)");
  TensorDictModule rows(checker, {"obs"}, {"rows"});
  TensorDict td({{"obs", at::ones({4, 3})}}, {4});
  CHECK_THROWS_AS(rows(td), ModuleError);
  CHECK_THROWS_WITH(rows(td), ContainsSubstring("TensorDictModule 'Checker' (in_keys ['obs'], "
                                                "out_keys ['rows']) failed: ") &&
                                  ContainsSubstring("shapes cannot be multiplied (4x3 and 2x1)"));
  // An int for a batch-[4] TensorDict is a 0-dim tensor, refused as Python refuses it.
  td.set("obs", at::ones({4, 2}));
  CHECK_THROWS_AS(rows(td), ShapeError);
  CHECK_THROWS_WITH(rows(td), ContainsSubstring("output 'rows' has shape [], whose leading dims "
                                                "are not the batch size [4]"));
  CHECK_FALSE(td.contains("rows"));
  // Without batch dims it is stored as Python stores it: an int64 0-dim tensor.
  TensorDict unbatched({{"obs", at::ones({3, 2})}});
  rows(unbatched);
  CHECK(same(unbatched.get("rows"), at::scalar_tensor(3, at::kLong)));
}

TEST_CASE("optional and defaulted TorchScript arguments may be left out", "[nn][script]") {
  const torch::jit::Module scaled = scaled_module();
  const at::Tensor x = at::arange(6, at::kFloat).reshape({3, 2});
  TensorDict td({{"x", x}}, {3});
  TensorDictModule one_key(scaled, {"x"}, {"y"});  // forward's defaults for scale and shift
  one_key(td);
  CHECK(same(td.get("y"), x + 1));
  TensorDictModule two_keys(scaled, {"x", "scale"}, {"y"});
  two_keys(td);  // "scale" missing from the data: None, as Python passes it
  CHECK(same(td.get("y"), x + 1));
  td.set("scale", at::full({3, 2}, 2.0F));
  two_keys(td);
  CHECK(same(td.get("y"), x * 2 + 1));
  CHECK_THROWS_MATCHES(TensorDictModule(scaled, {}, {"y"}), TypeError,
                       Catch::Matchers::Message("TensorDictModule 'Scaled': forward takes 3 "
                                                "arguments (1 without a default), the module has "
                                                "0 in_keys"));
  TensorDictModule on_missing(scaled, {"z"}, {"y"});
  CHECK_THROWS_MATCHES(on_missing(td), KeyError,
                       Catch::Matchers::Message("TensorDictModule 'Scaled': missing in_key 'z' "
                                                "(it takes in_keys ['z'])"));
}

TEST_CASE("in_keys by argument name, as Python's dict in_keys", "[nn][script]") {
  const torch::jit::Module scaled = scaled_module();
  const at::Tensor x = at::arange(6, at::kFloat).reshape({3, 2});
  TensorDict td({{"obs", x}, {"params", TensorDict({{"s", at::full({3, 2}, 3.0F)}}, {3})}}, {3});
  // Python: TensorDictModule(scaled, in_keys={"scale": ("params", "s"), "x": "obs"}, ...)
  TensorDictModule by_name =
      TensorDictModule::by_argument(scaled, {{"scale", {"params", "s"}}, {"x", "obs"}}, {"y"});
  CHECK(by_name.in_keys() == std::vector<NestedKey>{{"params", "s"}, "obs"});
  by_name(td);
  CHECK(same(td.get("y"), x * 3 + 1));
  // out_to_in_map=False: the same map, key first.
  TensorDictModule by_key = TensorDictModule::by_key(scaled, {{"obs", "x"}}, {"z"});
  by_key(td);
  CHECK(same(td.get("z"), x + 1));
  CHECK_THROWS_MATCHES(TensorDictModule::by_argument(scaled, {{"offset", "obs"}}, {"y"}), KeyError,
                       Catch::Matchers::Message("TensorDictModule 'Scaled': forward has no "
                                                "argument 'offset' (it takes x, scale, shift)"));
  CHECK_THROWS_MATCHES(TensorDictModule::by_argument(scaled, {{"shift", "obs"}}, {"y"}), TypeError,
                       Catch::Matchers::Message("TensorDictModule 'Scaled': forward's argument "
                                                "'x' has no default, and no in_key gives it"));
}

TEST_CASE("a dict forward reads the module's current parameters, and keys given twice once",
          "[nn][script]") {
  torch::jit::Module policy = dict_policy();
  TensorDictModule actor(policy, {"obs", "obs"}, {"logits"});
  TensorDict td({{"obs", at::randn({3, 4})}}, {3});
  actor(td);
  CHECK(td.get("logits").allclose(policy_logits(policy, td.get("obs"))));
  // forward is looked up once, when the module is built; the tensors it reads are the module's
  // attributes at each call.
  TensorDict params =
      from_module(policy).apply([](const at::Tensor& t) { return at::zeros_like(t); });
  {
    auto swap = to_module_scoped(params, policy);
    actor(td);
    CHECK(td.get("logits").equal(at::zeros({3, 2})));
  }
  actor(td);
  CHECK(td.get("logits").allclose(policy_logits(policy, td.get("obs"))));
}

TEST_CASE("a dict forward over nested dicts takes and gives nested keys", "[nn][script]") {
  torch::jit::Module nested("Nested");
  nested.define(R"(
def forward(self, td: Dict[str, Dict[str, Tensor]]) -> Dict[str, Dict[str, Tensor]]:
    inner: Dict[str, Tensor] = {}
    inner["double"] = td["agent"]["obs"] * 2
    out: Dict[str, Dict[str, Tensor]] = {}
    out["next"] = inner
    return out
)");
  TensorDictModule module(nested, {{"agent", "obs"}}, {{"next", "double"}});
  TensorDict td({}, {2});
  td.set({"agent", "obs"}, at::arange(6, at::kFloat).reshape({2, 3}));
  module(td);
  CHECK(td.get({"next", "double"}).equal(at::arange(6, at::kFloat).reshape({2, 3}) * 2));

  TensorDictModule missing(nested, {{"agent", "obs"}}, {{"next", "half"}});
  CHECK_THROWS_WITH(missing(td), "forward of Nested returned no out_key ('next', 'half')");
  TensorDictModule too_deep(nested, {{"agent", "obs"}}, {{"next", "double", "x"}});
  CHECK_THROWS_WITH(too_deep(td), "forward of Nested returned no out_key ('next', 'double', 'x')");
  // A plain key makes a Dict(str, Tensor), not the nested dict forward takes.
  TensorDictModule flat(nested, {"obs"}, {{"next", "double"}});
  td.set("obs", at::ones({2, 3}));
  CHECK_THROWS_WITH(flat(td),
                    "forward of Nested takes Dict(str, Dict(str, Tensor)), but the in_keys make a "
                    "Dict(str, Tensor)");
}

TEST_CASE("a TorchScript positional forward takes the in_keys in order", "[nn][script]") {
  torch::jit::Module mlp = tuple_mlp();
  TensorDictModule module(mlp, {"x", {"params", "scale"}}, {"y", "y_sum"});
  TensorDict td({{"x", at::randn({6, 4})}}, {6});
  td.set({"params", "scale"}, at::rand({6, 1}));
  module(td);
  const at::Tensor y =
      at::matmul(td.get("x"), mlp.attr("weight").toTensor()) * td.get({"params", "scale"});
  CHECK(td.get("y").allclose(y));
  CHECK(td.get("y_sum").allclose(y.sum(-1)));

  CHECK_THROWS_AS(TensorDictModule(mlp, {"x"}, {"y"}), TypeError);
  CHECK_THROWS_WITH(TensorDictModule(mlp, {"x"}, {"y"}),
                    "TensorDictModule 'Mlp': forward takes 2 arguments (2 without a default), the "
                    "module has 1 in_keys");
  TensorDictModule short_outs(mlp, {"x", {"params", "scale"}}, {"y"});
  CHECK_THROWS_WITH(short_outs(td),
                    ContainsSubstring("the module returned 2 outputs for 1 out_keys"));
}

TEST_CASE("from_module nests a TorchScript module's parameters and buffers", "[nn][script]") {
  torch::jit::Module policy = dict_policy();
  TensorDict params = from_module(policy);
  CHECK(params.keys() == std::vector<NestedKey>{"gain", "body"});
  CHECK(params.get_tensordict("body").keys() == std::vector<NestedKey>{"weight", "shift"});
  CHECK(params.get({"body", "weight"})
            .is_same(policy.attr("body").toModule().attr("weight").toTensor()));
  CHECK(from_module(policy, true).is_locked());
}

TEST_CASE("to_module swaps TorchScript tensors, scoped swaps restore them", "[nn][script]") {
  torch::jit::Module policy = dict_policy();
  TensorDictModule actor(policy, {"obs"}, {"logits"});
  TensorDict td({{"obs", at::randn({3, 4})}}, {3});
  const at::Tensor before = actor(td.clone()).get("logits");

  TensorDict zeros =
      from_module(policy).detach().clone().apply_([](const at::Tensor& t) { return t.zero_(); });
  {
    ModuleSwap swap = to_module_scoped(zeros, policy);
    CHECK(same(actor(td.clone()).get("logits"), at::zeros({3, 2})));
    CHECK(swap.originals().get_tensordict("body").keys() ==
          std::vector<NestedKey>{"weight", "shift"});
  }
  CHECK(same_to_rounding(actor(td.clone()).get("logits"), before));

  TensorDict old = to_module(zeros, policy);
  zeros.get({"body", "shift"}).fill_(2.0);  // the module holds these tensors now
  CHECK(same(actor(td.clone()).get("logits"), at::full({3, 2}, 0.0)));  // gain is 0
  to_module(old, policy);
  CHECK(same_to_rounding(actor(td.clone()).get("logits"), before));

  // In place: copied into the module's own tensors.
  const at::Tensor own = policy.attr("gain").toTensor();
  TensorDict doubled({{"gain", at::full({1}, 2.0)}}, {});
  to_module(doubled, policy, true);
  CHECK(policy.attr("gain").toTensor().is_same(own));
  CHECK(same_to_rounding(actor(td.clone()).get("logits"), before * 2));
}

TEST_CASE("to_module on TorchScript checks every key first", "[nn][script]") {
  torch::jit::Module policy = dict_policy();
  TensorDict before = from_module(policy).detach().clone();
  TensorDict bad(
      {{"gain", at::full({1}, 3.0)}, {"body", TensorDict({{"weight", at::ones({2, 2})}})}});
  CHECK_THROWS_AS(to_module(bad, policy), ShapeError);
  CHECK_THROWS_WITH(to_module(bad, policy),
                    "to_module: key 'body.weight' has shape [2, 2] but the "
                    "module's tensor has shape [4, 2]");
  CHECK((from_module(policy) == before).all());  // gain unchanged too
  TensorDict stray({{"head", TensorDict({{"w", at::ones({1})}})}});
  CHECK_THROWS_WITH(to_module(stray, policy), "to_module: the module has no submodule 'head'");
}

TEST_CASE("TorchScript parameters checkpoint through memmap and run as ensembles", "[nn][script]") {
  const auto dir = std::filesystem::temp_directory_path() / "tc_nn_script_ckpt";
  std::filesystem::remove_all(dir);
  torch::jit::Module trained = dict_policy();
  from_module(trained).memmap(dir.string());
  torch::jit::Module fresh = dict_policy();
  to_module(TensorDict::load_memmap(dir.string()), fresh, true);
  TensorDict td({{"obs", at::randn({4, 4})}}, {4});
  TensorDictModule a(trained, {"obs"}, {"logits"});
  TensorDictModule b(fresh, {"obs"}, {"logits"});
  CHECK(same(a(td.clone()).get("logits"), b(td.clone()).get("logits")));
  std::filesystem::remove_all(dir);

  TensorDict members = stack({from_module(dict_policy()).detach(), from_module(fresh).detach()});
  const at::Tensor obs = td.get("obs");
  std::vector<at::Tensor> outs = ensemble_apply(members, fresh, [&](int64_t) {
    return TensorDictModule(fresh, {"obs"}, {"logits"})(td.clone()).get("logits");
  });
  REQUIRE(outs.size() == 2);
  CHECK(same(outs[1], b(td.clone()).get("logits")));
  CHECK_FALSE(same(outs[0], outs[1]));
  CHECK(same(b(td.clone()).get("logits"), a(td.clone()).get("logits")));  // restored
}
