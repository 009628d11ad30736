#include "lazy_forms.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <map>
#include <sstream>
#include <type_traits>

#include "io_test_util.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/module.h"
#include "tensordict/state_dict.h"

namespace lazy_forms {
namespace {

using namespace tensordict;

// ---- results as text, so that one comparison serves every return type -------------------------
std::string describe(const TensorDict& td);
std::string describe(const Value& v);

std::string describe(const at::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::ostringstream os;
  os << t.sizes() << ' ' << t.scalar_type() << ':';
  const at::Tensor d = t.to(at::kDouble).contiguous().flatten();
  const double* p = d.data_ptr<double>();
  for (int64_t i = 0; i < d.numel(); ++i) os << p[i] << ',';
  return os.str();
}
std::string describe(const Value& v) {
  if (v.is_tensor()) return describe(v.tensor());
  if (v.is_tensordict()) return describe(v.tensordict());
  if (v.is_non_tensor_data()) return "data:" + v.non_tensor_data().data.dump();
  return "items:" + v.non_tensor_stack().tolist().dump();
}
// Entries by dotted name; a NonTensorData reads as its value repeated over the batch of the
// TensorDict holding it (what a lazy read and a dense stack give for the same content).
void describe_level(const TensorDict& td, const std::string& prefix,
                    std::map<std::string, std::string>& out) {
  for (const auto& key : td.keys()) {
    const Value v = td.get_value(key);
    const std::string name = prefix + key.front();
    if (v.is_tensordict()) {
      describe_level(v.tensordict(), name + ".", out);
    } else if (v.is_non_tensor_data()) {
      const Json& data = v.non_tensor_data().data;
      out[name] = "items:" + NonTensorStack::filled(td.batch_size(), data).tolist().dump();
    } else {
      out[name] = describe(v);
    }
  }
}
std::string describe(const TensorDict& td) {
  std::map<std::string, std::string> entries;
  describe_level(td, "", entries);
  std::string out = "td" + shape_str(td.batch_size()) + "{";
  for (const auto& [name, text] : entries) out += name + "=" + text + ";";
  return out + "}";
}
std::string describe(bool b) { return b ? "true" : "false"; }
std::string describe(const std::string& text) { return text; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
std::string describe(T n) {
  return std::to_string(n);
}
std::string describe(const std::vector<TensorDict>& tds) {
  std::string out = "[";
  for (const auto& td : tds) out += describe(td) + "|";
  return out + "]";
}
std::string describe(const std::vector<NestedKey>& keys) {
  std::string out;
  for (const auto& key : keys) out += key.repr() + ",";
  return out;
}
std::string describe(const DimNames& names) {
  std::string out;
  for (const auto& n : names) out += n.value_or("None") + ",";
  return out;
}
std::string describe(const StateDict& state) {
  std::string out;
  for (const auto& [key, tensor] : state.tensors) out += key + "=" + describe(tensor) + ";";
  return out;
}
std::string describe(const ValuesIndices& r) {
  return describe(r.values) + "|" + describe(r.indices);
}

/// Runs `op` and describes its result; an exception is described by its type, so that an op
/// failing alike on both forms (pin_memory without CUDA) still compares.
template <class Op>
std::function<std::string(TensorDict)> run(Op op) {
  return [op](TensorDict td) -> std::string {
    try {
      return describe(op(td));
    } catch (const TypeError&) {
      throw;  // the refusal a Refused entry expects; an error for a Same entry
    } catch (const std::exception& e) {
      return std::string("threw: ") + typeid(e).name();
    }
  };
}

/// A fresh directory per call (saves on both forms must not meet), removed at exit.
std::string scratch() {
  static tc_test::TempDir root;
  static int n = 0;
  return root / std::to_string(n++);
}

Entry same(const char* member, std::function<std::string(TensorDict)> fn) {
  return {member, Form::Same, std::move(fn)};
}
Entry refused(const char* member, std::function<std::string(TensorDict)> fn) {
  return {member, Form::Refused, std::move(fn)};
}
Entry not_an_op(const char* member) { return {member, Form::NotAnOp, nullptr}; }

// A [2, 3] operand for the binary ops (the same on both forms).
TensorDict operand(const TensorDict& td) {
  return td.apply([](const at::Tensor& t) { return t + 1; });
}

}  // namespace

const std::vector<Entry>& entries() {
  using R = ReduceDims;
  static const std::vector<Entry> table = {
      // Not ops on content: constructors, static makers, iteration, the lazy form's accessors.
      not_an_op("TensorDict"),
      not_an_op("operator="),
      not_an_op("fromkeys"),
      not_an_op("from_dict"),
      not_an_op("from_list"),
      not_an_op("from_consolidated"),
      not_an_op("load_memmap"),
      not_an_op("from_safetensors"),
      not_an_op("load"),
      not_an_op("from_module"),
      not_an_op("begin"),
      not_an_op("RowIterator"),
      not_an_op("end"),
      not_an_op("class_slot"),
      not_an_op("is_lazy_stack"),
      not_an_op("tensordicts"),
      not_an_op("stack_dim"),
      not_an_op("append"),  // the lazy form's own edits (test_lazy_write)
      not_an_op("insert"),
      not_an_op("is_same"),
      // Metadata.
      same("batch_size", run([](TensorDict td) { return shape_str(td.batch_size()); })),
      same("shape", run([](TensorDict td) { return shape_str(td.shape()); })),
      same("batch_dims", run([](TensorDict td) { return td.batch_dims(); })),
      same("ndim", run([](TensorDict td) { return td.ndim(); })),
      same("numel", run([](TensorDict td) { return td.numel(); })),
      same("device", run([](TensorDict td) { return describe(td.device().has_value()); })),
      same("dtype", run([](TensorDict td) {
             const auto dtype = td.dtype();
             return dtype ? std::string(c10::toString(*dtype)) : std::string("mixed");
           })),
      same("set_device", run([](TensorDict td) { return td.set_device(at::Device("cpu")); })),
      refused("set_batch_size", run([](TensorDict td) {
                td.set_batch_size({2});
                return td;
              })),
      refused("auto_batch_size_", run([](TensorDict td) { return td.auto_batch_size_(1); })),
      same("names", run([](TensorDict td) { return td.names(); })),
      same("set_names", run([](TensorDict td) {
             td.set_names(DimNames{"a", "b"});
             return td.names();
           })),
      same("refine_names", run([](TensorDict td) {
             return td.refine_names({"a", std::nullopt}).names();
           })),
      same("rename", run([](TensorDict td) {
             return td.rename(DimNames{"a", "b"}).names();
           })),
      same("rename_", run([](TensorDict td) {
             return td.rename_(DimNames{"a", "b"}).names();
           })),
      same("is_empty", run([](TensorDict td) { return td.is_empty(); })),
      same("is_locked", run([](TensorDict td) { return td.is_locked(); })),
      same("lock_", run([](TensorDict td) { return td.lock_().is_locked(); })),
      same("unlock_", run([](TensorDict td) { return td.lock_().unlock_().is_locked(); })),
      same("is_memmap", run([](TensorDict td) { return td.is_memmap(); })),
      same("saved_path", run([](TensorDict td) { return describe(td.saved_path().has_value()); })),
      same("is_consolidated", run([](TensorDict td) { return td.is_consolidated(); })),
      // Entries.
      same("contains", run([](TensorDict td) {
             return td.contains(NestedKey({"n", "y"}));
           })),
      same("get", run([](TensorDict td) { return td.get("x"); })),
      same("get_at", run([](TensorDict td) { return td.get_at("x", {1}); })),
      same("to_dict", run([](TensorDict td) { return td.to_dict().dump(); })),
      same("operator[]", run([](TensorDict td) { return td[1]; })),
      same("get_value", run([](TensorDict td) { return describe(td.get_value("s")); })),
      same("get_tensordict", run([](TensorDict td) { return td.get_tensordict("n"); })),
      same("get_non_tensor", run([](TensorDict td) { return td.get_non_tensor("s").dump(); })),
      same("is_non_tensor", run([](TensorDict td) {
             return describe(td.is_non_tensor("s")) + describe(td.is_non_tensor("x"));
           })),
      same("get_padded", run([](TensorDict td) { return td.get_padded("x"); })),
      same("get_list", run([](TensorDict td) { return at::stack(td.get_list("x")); })),
      same("get_nested_tensor", run([](TensorDict td) {
             return at::nested_to_padded_tensor(td.get_nested_tensor("x"), 0);
           })),
      same("keys", run([](TensorDict td) { return td.keys(true); })),
      same("values", run([](TensorDict td) { return static_cast<int64_t>(td.values().size()); })),
      same("items", run([](TensorDict td) { return describe(td.items().at(0).second); })),
      same("size", run([](TensorDict td) { return static_cast<int64_t>(td.size()); })),
      same("depth", run([](TensorDict td) { return td.depth(); })),
      refused("key_at", run([](TensorDict td) { return td.key_at(0); })),
      refused("value_at", run([](TensorDict td) { return describe(td.value_at(0)); })),
      // Slots are the dense form's storage: a lazy stack has none (TensorDictModule then reads by
      // key).
      same("slot_of",
           run([](TensorDict td) { return td.slot_of("x") == (td.is_lazy_stack() ? -1 : 0); })),
      same("set", run([](TensorDict td) {
             return td.set("z", at::ones({2, 3}));
           })),
      same("set_", run([](TensorDict td) {
             return td.set_("x", at::zeros({2, 3, 4}));
           })),
      same("set_non_tensor", run([](TensorDict td) { return td.set_non_tensor("t", "u"); })),
      same("del_", run([](TensorDict td) { return td.del_("x"); })),
      same("pop", run([](TensorDict td) { return describe(td.pop("x")); })),
      same("popitem", run([](TensorDict td) {
             TensorDict rest = td.exclude({"s"});
             const auto item = rest.popitem();  // the last top-level entry: "n"
             return item.first.repr() + describe(item.second) + describe(rest);
           })),
      same("setdefault", run([](TensorDict td) {
             return describe(td.setdefault("z", at::ones({2, 3})));
           })),
      same("rename_key_", run([](TensorDict td) { return td.rename_key_("x", "w"); })),
      same("zero_", run([](TensorDict td) { return td.zero_(); })),
      same("fill_", run([](TensorDict td) { return td.fill_("x", 7); })),
      same("select", run([](TensorDict td) { return td.select({"x"}); })),
      same("exclude", run([](TensorDict td) { return td.exclude({"x"}); })),
      same("select_", run([](TensorDict td) { return td.select_({"x"}); })),
      same("exclude_", run([](TensorDict td) { return td.exclude_({"x"}); })),
      same("clear", run([](TensorDict td) { return td.clear(); })),
      same("create_nested", run([](TensorDict td) {
             return td.create_nested({"m", "k"});
           })),
      same("update_at_", run([](TensorDict td) { return td.update_at_(operand(td)[1], {1}); })),
      same("set_at_", run([](TensorDict td) {
             return td.set_at_("x", at::ones({3, 4}), {0});
           })),
      same("copy_at_", run([](TensorDict td) { return td.copy_at_(operand(td)[1], {1}); })),
      same("cat_tensors", run([](TensorDict td) {
             td.set("w", td.get("x") + 1);
             return td.cat_tensors({"x", "w"}, "c", -1);
           })),
      same("stack_tensors", run([](TensorDict td) {
             td.set("w", td.get("x") + 1);
             return td.stack_tensors({"x", "w"}, "c", -1, /*keep_entries=*/true);
           })),
      same("update", run([](TensorDict td) { return td.update(operand(td)); })),
      same("update_", run([](TensorDict td) { return td.update_(operand(td)); })),
      same("flatten_keys", run([](TensorDict td) { return td.flatten_keys(); })),
      same("flatten_keys_", run([](TensorDict td) { return td.flatten_keys_("/"); })),
      same("unflatten_keys_",
           run([](TensorDict td) { return td.flatten_keys_("/").unflatten_keys_("/"); })),
      same("unflatten_keys", run([](TensorDict td) { return td.flatten_keys().unflatten_keys(); })),
      same("split_keys", run([](TensorDict td) { return td.split_keys({{"x"}}); })),
      same("separates", run([](TensorDict td) {
             TensorDict moved = td.separates({"x"});
             return describe(moved) + describe(td);
           })),
      same("cat_from_tensordict",
           run([](TensorDict td) { return td.select({"x"}).cat_from_tensordict(1); })),
      same("stack_from_tensordict",
           run([](TensorDict td) { return td.select({"x"}).stack_from_tensordict(1); })),
      // Copies and structure.
      same("clone", run([](TensorDict td) { return td.clone(); })),
      same("empty", run([](TensorDict td) { return td.empty(true); })),
      same("densify", run([](TensorDict td) { return td.densify(); })),
      same("detach", run([](TensorDict td) { return td.detach(); })),
      same("to", run([](TensorDict td) { return td.to(at::kDouble); })),
      same("contiguous", run([](TensorDict td) { return td.contiguous(); })),
      refused("contiguous_", run([](TensorDict td) { return td.contiguous_(); })),
      refused("consolidate", run([](TensorDict td) { return td.consolidate(); })),
      same("share_memory_", run([](TensorDict td) { return td.share_memory_(); })),
      same("is_shared", run([](TensorDict td) {
             return describe(td.is_shared()) + describe(td.share_memory_().is_shared());
           })),
      // The pointers themselves differ: a lazy stack's leaves are stacked when read.
      same("data_ptr", run([](TensorDict td) { return describe(td.data_ptr().keys(true, true)); })),
      same("bytes", run([](TensorDict td) { return td.bytes(); })),
      same("param_count", run([](TensorDict td) { return td.param_count(false); })),
      same("to_", run([](TensorDict td) { return td.to_(at::kDouble); })),
      same("replace", run([](TensorDict td) { return td.replace(operand(td).exclude({"x"})); })),
      same("new_tensor", run([](TensorDict td) { return td.new_tensor(operand(td)); })),
      same("apply_out", run([](TensorDict td) {
             TensorDict out = td.empty();
             td.apply_out(out, [](const at::Tensor& t) { return t * 3; });
             return out;
           })),
      same("where_out", run([](TensorDict td) {
             TensorDict out = td.empty();
             td.where_out(out, at::eye(2, 3).to(at::kBool), td.empty(), 5);
             return out;
           })),
      same("gather_out", run([](TensorDict td) {
             TensorDict out = td.empty();
             td.gather_out(out, 1, at::zeros({2, 2}, at::kLong));
             return out;
           })),
      same("pin_memory", run([](TensorDict td) { return td.pin_memory(); })),
      same("apply",
           run([](TensorDict td) { return td.apply([](const at::Tensor& t) { return t * 2; }); })),
      same("apply_",
           run([](TensorDict td) { return td.apply_([](const at::Tensor& t) { return t * 2; }); })),
      same("named_apply_", run([](TensorDict td) {
             return td.named_apply_(
                 [](const NestedKey& key, const at::Tensor& t) {
                   return key.size() == 2 ? t * 2 : at::Tensor();
                 },
                 /*nested_keys=*/true);
           })),
      same("named_apply", run([](TensorDict td) {
             return td.named_apply([](const NestedKey& key,
                                      const at::Tensor& t) { return key.size() == 2 ? t * 2 : t; },
                                   /*nested_keys=*/true);
           })),
      same("map", run([](TensorDict td) {
             return td.map([](const TensorDict& row) { return row.clone(); });
           })),
      same("masked_fill",
           run([](TensorDict td) { return td.masked_fill(at::eye(2, 3).to(at::kBool), 5); })),
      same("masked_fill_",
           run([](TensorDict td) { return td.masked_fill_(at::eye(2, 3).to(at::kBool), 5); })),
      same("where",
           run([](TensorDict td) { return td.where(at::eye(2, 3).to(at::kBool), operand(td)); })),
      // Indexing and shape ops.
      same("index", run([](TensorDict td) {
             return td.index({Slice(0, 1), 2});
           })),
      same("index_put_", run([](TensorDict td) { return td.index_put_({0}, operand(td)[1]); })),
      same("expand_as", run([](TensorDict td) {
             return td.expand_as(at::zeros({4, 2, 3}));
           })),
      same("expand", run([](TensorDict td) {
             return td.expand({4, 2, 3});
           })),
      same("split", run([](TensorDict td) { return td.split(1, 1); })),
      same("chunk", run([](TensorDict td) { return td.chunk(2, 0); })),
      same("unbind", run([](TensorDict td) { return td.unbind(1); })),
      same("tensor_split", run([](TensorDict td) { return td.tensor_split(2, 1); })),
      same("view", run([](TensorDict td) { return td.view({6}); })),
      same("reshape", run([](TensorDict td) {
             return td.reshape({3, 2});
           })),
      refused("reshape_", run([](TensorDict td) {
                return td.reshape_({3, 2});
              })),
      same("flatten", run([](TensorDict td) { return td.flatten(); })),
      refused("flatten_", run([](TensorDict td) { return td.flatten_(); })),
      same("unflatten", run([](TensorDict td) {
             return td.unflatten(1, {3, 1});
           })),
      refused("unflatten_", run([](TensorDict td) {
                return td.unflatten_(1, {3, 1});
              })),
      same("squeeze", run([](TensorDict td) { return td.unsqueeze(0).squeeze(0); })),
      same("unsqueeze", run([](TensorDict td) { return td.unsqueeze(1); })),
      same("permute", run([](TensorDict td) {
             return td.permute({1, 0});
           })),
      same("transpose", run([](TensorDict td) { return td.transpose(0, 1); })),
      same("swapaxes", run([](TensorDict td) { return td.swapaxes(0, 1); })),
      same("swapdims", run([](TensorDict td) { return td.swapdims(0, 1); })),
      same("movedim", run([](TensorDict td) { return td.movedim({0}, {1}); })),
      same("flip", run([](TensorDict td) { return td.flip({1}); })),
      same("fliplr", run([](TensorDict td) { return td.fliplr(); })),
      same("flipud", run([](TensorDict td) { return td.flipud(); })),
      same("rot90", run([](TensorDict td) { return td.rot90(); })),
      same("roll", run([](TensorDict td) { return td.roll({1}, {1}); })),
      refused("roll_", run([](TensorDict td) { return td.roll_({1}, {1}); })),
      refused("repeat_", run([](TensorDict td) {
                return td.repeat_({2, 1});
              })),
      refused("repeat_interleave_", run([](TensorDict td) { return td.repeat_interleave_(2, 1); })),
      same("narrow", run([](TensorDict td) { return td.narrow(1, 1, 2); })),
      same("repeat", run([](TensorDict td) {
             return td.repeat({2, 1});
           })),
      same("repeat_interleave", run([](TensorDict td) { return td.repeat_interleave(2, 1); })),
      same("to_lazystack", run([](TensorDict td) { return td.to_lazystack(1); })),
      same("new_empty", run([](TensorDict td) {
             return td.new_empty({5}).apply([](const at::Tensor& t) { return at::zeros_like(t); });
           })),
      same("new_zeros", run([](TensorDict td) { return td.new_zeros({4}); })),
      same("new_ones", run([](TensorDict td) {
             return td.new_ones({4, 1});
           })),
      same("new_full", run([](TensorDict td) { return td.new_full({4}, 7); })),
      same("tile", run([](TensorDict td) {
             return td.tile({2, 1});
           })),
      same("broadcast_to", run([](TensorDict td) {
             return td.broadcast_to({2, 2, 3});
           })),
      same("atleast_1d", run([](TensorDict td) { return td.atleast_1d(); })),
      same("atleast_2d", run([](TensorDict td) { return td.atleast_2d(); })),
      same("atleast_3d", run([](TensorDict td) { return td.atleast_3d(); })),
      same("pad", run([](TensorDict td) {
             return td.pad({0, 1, 1, 0});
           })),
      same("pad_", run([](TensorDict td) {
             return td.pad_({0, 1});
           })),
      same("gather", run([](TensorDict td) {
             return td.gather(1, at::zeros({2, 2}, at::kLong));
           })),
      refused("gather_", run([](TensorDict td) {
                return td.gather_(1, at::zeros({2, 2}, at::kLong));
              })),
      // Element-wise math.
      same("add", run([](TensorDict td) { return td.add(operand(td)); })),
      same("add_", run([](TensorDict td) { return td.add_(2); })),
      same("sub", run([](TensorDict td) { return td.sub(operand(td)); })),
      same("sub_", run([](TensorDict td) { return td.sub_(2); })),
      same("mul", run([](TensorDict td) { return td.mul(operand(td)); })),
      same("mul_", run([](TensorDict td) { return td.mul_(2); })),
      same("div", run([](TensorDict td) { return td.div(operand(td)); })),
      same("div_", run([](TensorDict td) { return td.to(at::kFloat).div_(2); })),
      same("pow", run([](TensorDict td) { return td.pow(2); })),
      same("pow_", run([](TensorDict td) { return td.pow_(2); })),
      same("mod", run([](TensorDict td) { return td.mod(3); })),
      same("bitwise_and", run([](TensorDict td) { return td.to(at::kLong).bitwise_and(3); })),
      same("bitwise_or", run([](TensorDict td) { return td.to(at::kLong).bitwise_or(3); })),
      same("bitwise_xor", run([](TensorDict td) { return td.to(at::kLong).bitwise_xor(3); })),
      same("lerp", run([](TensorDict td) {
             return td.to(at::kFloat).lerp(operand(td).to(at::kFloat), 0.5);
           })),
      same("lerp_", run([](TensorDict td) {
             return td.to(at::kFloat).lerp_(operand(td).to(at::kFloat), 0.5);
           })),
      same("clamp", run([](TensorDict td) { return td.clamp(1, 5); })),
      same("clamp_", run([](TensorDict td) { return td.clamp_(1, 5); })),
      same("clamp_min", run([](TensorDict td) { return td.clamp_min(2); })),
      same("clamp_min_", run([](TensorDict td) { return td.clamp_min_(2); })),
      same("clamp_max", run([](TensorDict td) { return td.clamp_max(2); })),
      same("clamp_max_", run([](TensorDict td) { return td.clamp_max_(2); })),
      same("maximum", run([](TensorDict td) { return td.maximum(operand(td).sub(2)); })),
      same("maximum_", run([](TensorDict td) { return td.maximum_(operand(td).sub(2)); })),
      same("minimum", run([](TensorDict td) { return td.minimum(operand(td).sub(2)); })),
      same("minimum_", run([](TensorDict td) { return td.minimum_(operand(td).sub(2)); })),
      same("softmax", run([](TensorDict td) { return td.to(at::kFloat).softmax(0); })),
      same("isfinite", run([](TensorDict td) { return td.to(at::kFloat).log().isfinite(); })),
      same("isnan", run([](TensorDict td) { return td.to(at::kFloat).sub(3).sqrt().isnan(); })),
      same("isreal", run([](TensorDict td) { return td.isreal(); })),
      same("isposinf",
           run([](TensorDict td) { return td.to(at::kFloat).reciprocal().isposinf(); })),
      same("isneginf", run([](TensorDict td) { return td.to(at::kFloat).log().isneginf(); })),
      same("lt", run([](TensorDict td) { return td.lt(3); })),
      same("le", run([](TensorDict td) { return td.le(3); })),
      same("gt", run([](TensorDict td) { return td.gt(3); })),
      same("ge", run([](TensorDict td) { return td.ge(3); })),
      same("operator==", run([](TensorDict td) { return td == operand(td); })),
      same("operator!=", run([](TensorDict td) { return td != operand(td); })),
      same("eq", run([](TensorDict td) { return td.eq(operand(td)); })),
      same("ne", run([](TensorDict td) { return td.ne(3); })),
      same("abs", run([](TensorDict td) { return td.abs(); })),
      same("abs_", run([](TensorDict td) { return td.abs_(); })),
      same("exp", run([](TensorDict td) { return td.exp(); })),
      same("exp_", run([](TensorDict td) { return td.to(at::kFloat).exp_(); })),
      same("log", run([](TensorDict td) { return td.log(); })),
      same("log_", run([](TensorDict td) { return td.to(at::kFloat).log_(); })),
      same("sqrt", run([](TensorDict td) { return td.sqrt(); })),
      same("sqrt_", run([](TensorDict td) { return td.to(at::kFloat).sqrt_(); })),
      same("sigmoid", run([](TensorDict td) { return td.sigmoid(); })),
      same("sigmoid_", run([](TensorDict td) { return td.to(at::kFloat).sigmoid_(); })),
      same("tanh", run([](TensorDict td) { return td.tanh(); })),
      same("tanh_", run([](TensorDict td) { return td.to(at::kFloat).tanh_(); })),
      same("sign", run([](TensorDict td) { return td.sign(); })),
      same("sign_", run([](TensorDict td) { return td.sign_(); })),
      same("floor", run([](TensorDict td) { return td.floor(); })),
      same("floor_", run([](TensorDict td) { return td.floor_(); })),
      same("ceil", run([](TensorDict td) { return td.ceil(); })),
      same("ceil_", run([](TensorDict td) { return td.ceil_(); })),
      same("round", run([](TensorDict td) { return td.round(); })),
      same("round_", run([](TensorDict td) { return td.round_(); })),
      same("neg", run([](TensorDict td) { return td.neg(); })),
      same("neg_", run([](TensorDict td) { return td.neg_(); })),
      same("reciprocal", run([](TensorDict td) { return td.reciprocal(); })),
      same("reciprocal_", run([](TensorDict td) { return td.to(at::kFloat).reciprocal_(); })),
      // Reductions.
      same("sum", run([](TensorDict td) { return td.sum(R(1)); })),
      same("mean", run([](TensorDict td) { return td.to(at::kFloat).mean(reduce_all); })),
      same("std", run([](TensorDict td) { return td.to(at::kFloat).std(R(0)); })),
      same("var", run([](TensorDict td) { return td.to(at::kFloat).var(reduce_all); })),
      same("prod", run([](TensorDict td) { return td.prod(R(1)); })),
      same("max", run([](TensorDict td) { return td.max(reduce_all); })),
      same("min", run([](TensorDict td) { return td.min(R(0)); })),
      same("amax", run([](TensorDict td) { return td.amax(R(1)); })),
      same("amin", run([](TensorDict td) { return td.amin(R(0), true); })),
      same("max_with_indices", run([](TensorDict td) { return td.max_with_indices(1); })),
      same("min_with_indices", run([](TensorDict td) { return td.min_with_indices(0, true); })),
      same("cummax", run([](TensorDict td) { return td.cummax(1); })),
      same("cummin", run([](TensorDict td) { return td.cummin(0); })),
      same("logsumexp", run([](TensorDict td) { return td.to(at::kFloat).logsumexp(R(1)); })),
      same("logsumexp_out", run([](TensorDict td) {
             TensorDict out = td.to(at::kFloat).logsumexp(R(1)).zero_();
             td.to(at::kFloat).logsumexp_out(out, R(1));
             return out;
           })),
      // Autograd: the gradients reach the leaves through the lazy stack's stacking.
      same("requires_grad",
           run([](TensorDict td) { return td.to(at::kFloat).requires_grad_().requires_grad(); })),
      same("requires_grad_", run([](TensorDict td) {
             return td.to(at::kFloat).requires_grad_().get("x").requires_grad();
           })),
      same("grad", run([](TensorDict td) {
             TensorDict f = td.to(at::kFloat).requires_grad_();
             f.mul(3).sum(reduce_all).backward();
             return f.grad();
           })),
      same("zero_grad", run([](TensorDict td) {
             TensorDict f = td.to(at::kFloat).requires_grad_();
             f.sum(reduce_all).backward();
             return f.zero_grad(false).grad();
           })),
      same("backward", run([](TensorDict td) {
             TensorDict f = td.to(at::kFloat).requires_grad_();
             const TensorDict out = f.mul(2);
             out.backward(out.apply([](const at::Tensor& t) { return at::ones_like(t); }));
             return f.grad();
           })),
      same("norm", run([](TensorDict td) { return td.to(at::kFloat).norm(R(1)); })),
      same("nansum", run([](TensorDict td) { return td.to(at::kFloat).nansum(R(1)); })),
      same("nanmean", run([](TensorDict td) { return td.to(at::kFloat).nanmean(reduce_all); })),
      same("quantile", run([](TensorDict td) { return td.to(at::kFloat).quantile(0.5, R(1)); })),
      same("all", run([](TensorDict td) { return td.all(); })),
      same("any", run([](TensorDict td) { return td.any(); })),
      // IO.
      same("memmap", run([](TensorDict td) {
             return TensorDict::load_memmap(td.memmap(scratch()).saved_path().value());
           })),
      same("save", run([](TensorDict td) {
             return TensorDict::load(td.save(scratch()).saved_path().value());
           })),
      same("dumps", run([](TensorDict td) { return td.dumps(scratch()); })),
      same("to_safetensors", run([](TensorDict td) {
             const std::string file = scratch() + ".safetensors";
             td.to_safetensors(file);
             return TensorDict::from_safetensors(file);
           })),
      same("memmap_", run([](TensorDict td) { return td.memmap_(scratch()); })),
      same("memmap_like", run([](TensorDict td) { return td.memmap_like(scratch()); })),
      same("memmap_async", run([](TensorDict td) { return td.memmap_async(scratch()).get(); })),
      same("memmap_refresh_",
           run([](TensorDict td) { return td.memmap_(scratch()).memmap_refresh_(); })),
      same("load_memmap_", run([](TensorDict td) {
             const std::string dir = scratch();
             td.clone().memmap(dir);
             return td.load_memmap_(dir);
           })),
      same("load_", run([](TensorDict td) {
             const std::string dir = scratch();
             td.clone().memmap(dir);
             return td.load_(dir);
           })),
      same("state_dict", run([](TensorDict td) { return td.state_dict(); })),
      same("load_state_dict",
           run([](TensorDict td) { return td.load_state_dict(operand(td).state_dict()); })),
      // Modules: the parameters of a module, stacked lazily or densely (ensembles).
      same("to_module", run([](TensorDict td) {
             at::manual_seed(0);
             torch::nn::Linear lin(2, 1);
             const TensorDict p = TensorDict::from_module(lin);
             TensorDict params =
                 td.is_lazy_stack() ? lazy_stack({p, p.clone()}) : stack({p, p.clone()});
             return params[0].to_module(lin);
           })),
      same("to_module_scoped", run([](TensorDict td) {
             at::manual_seed(0);
             torch::nn::Linear lin(2, 1);
             const TensorDict p = TensorDict::from_module(lin);
             TensorDict params =
                 td.is_lazy_stack() ? lazy_stack({p, p.clone()}) : stack({p, p.clone()});
             auto swap = params[1].to_module_scoped(lin);
             return TensorDict::from_module(lin).clone();
           })),
  };
  return table;
}

}  // namespace lazy_forms
