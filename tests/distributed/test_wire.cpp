// The pieces of the distributed protocol that need no second process: pickles, Python's
// consolidated metadata, and the pseudo_rand tag chain. The expected bytes and numbers were made
// by Python 3.11's pickle, Python tensordict 0.14 and numpy 1.24 (see each case).
#include <ATen/ATen.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "catch2_compat.h"
#include <cerrno>
#include <limits>
#include <string>

#include "metadata.h"
#include "pickle.h"
#include "pseudo_rand.h"
#include "tensordict/distributed.h"
#include "tensordict/errors.h"
#include "tensordict/internal.h"
#include "tensordict/non_tensor.h"
#include "wire.h"

using namespace tensordict;
using namespace tensordict::dist::detail;
using tensordict::dist::CommOptions;
using tensordict::dist::PeerError;
using tensordict::dist::PeerFailure;

namespace {

// A byte string that may hold NULs.
template <size_t N>
std::string raw(const char (&bytes)[N]) {
  return std::string(bytes, N - 1);
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// pickle.dumps(m) (protocol 4) of the consolidated metadata Python 0.14 writes for
// TensorDict({"a": arange(3.), "n": {"b": ones(3, 2, int64), "s": NonTensorData("hi")},
// "c": C(x=zeros(3))}, [3]) with a tensorclass C, plus "_total_bytes": 80.
const char* const kPythonMetadata =
    "80049563010000000000007d94288c03636c73948c0a54656e736f7244696374948c0b6e6f6e5f74656e736f72"
    "73947d948c066c6561766573947d948c016194288c0d746f7263682e666c6f61743332945d944b03614b004b104b"
    "047494738c0c636c735f6d65746164617461947d94288c06646576696365944e8c056e616d6573945d944e618c0a"
    "62617463685f73697a65945d944b03618c0969735f6c6f636b65649489758c016e947d94286801680268037d948c"
    "0173948c026869945d944b03614e87947368057d948c016294288c0b746f7263682e696e743634945d94284b034b"
    "02654b104b404b00749473680b7d9428680d4e680e5d944e6168105d944b036168128975758c0163947d94286801"
    "8c085f5f6d61696e5f5f948c014394939468037d9468057d948c0178942868085d944b03614b404b504b04749473"
    "680b7d9428680d4e680e5d944e6168105d944b036168128975758c0c5f746f74616c5f6279746573944b50752e";

Json level(const Json& leaves, const Json& non_tensors, const Json& cls = "TensorDict") {
  return Json{
      {"cls", cls},
      {"non_tensors", non_tensors},
      {"leaves", leaves},
      {"cls_metadata",
       {{"device", nullptr}, {"names", {nullptr}}, {"batch_size", {3}}, {"is_locked", false}}}};
}

Json python_metadata() {
  Json m = level({{"a", {"torch.float32", {3}, 0, 16, 4}}}, Json::object());
  m["n"] = level({{"b", {"torch.int64", {3, 2}, 16, 64, 0}}}, {{"s", {"hi", {3}, nullptr}}});
  m["c"] = level({{"x", {"torch.float32", {3}, 64, 80, 4}}}, Json::object(), "__main__.C");
  return m;
}

template <class F>
std::string format_error(F&& fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no FormatError";
}

}  // namespace

TEST_CASE("distributed pickle: reads Python's metadata pickle, class references as names",
          "[distributed]") {
  Json expected = python_metadata();
  expected["_total_bytes"] = 80;
  CHECK(unpickle(from_hex(kPythonMetadata), "test") == expected);
}

TEST_CASE("distributed pickle: protocol 2, shared lists, 64-bit ints, floats, UTF-8",
          "[distributed]") {
  // pickle.dumps({"k": (l, l, -7, 2**40, -2**63, 2**64 - 1, 0.25, True, None, "é")},
  // protocol=2) with l = [1, 2]: BINPUT / BINGET, LONG1 of 6, 8 and 9 bytes.
  const std::string bytes = from_hex(
      "80027d710058010000006b7101285d7102284b014b026568024af9ffffff8a060000000000018a08000000000000"
      "00808a09ffffffffffffffff00473fd0000000000000884e5802000000c3a97103747104732e");
  const Json got = unpickle(bytes, "test");
  const Json& k = got.at("k");
  CHECK(k.at(0) == Json::array({1, 2}));
  CHECK(k.at(1) == Json::array({1, 2}));
  CHECK(k.at(2).get<int64_t>() == -7);
  CHECK(k.at(3).get<int64_t>() == (int64_t{1} << 40));
  CHECK(k.at(4).get<int64_t>() == std::numeric_limits<int64_t>::min());
  CHECK(k.at(5).get<uint64_t>() == std::numeric_limits<uint64_t>::max());
  CHECK(k.at(6).get<double>() == 0.25);
  CHECK(k.at(7) == true);
  CHECK(k.at(8).is_null());
  CHECK(k.at(9) == "\xc3\xa9");
}

TEST_CASE("distributed pickle: what the Pickler writes reads back", "[distributed]") {
  const Json value = {{"ints",
                       {0, -1, 255, 65536, -2147483648LL, 2147483648LL,
                        std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}},
                      {"big", std::numeric_limits<uint64_t>::max()},
                      {"floats", {-0.5, 1e300}},
                      {"nested", {{"list", Json::array()}, {"none", nullptr}, {"yes", true}}},
                      {"text", "caf\xc3\xa9 \"quoted\""}};
  CHECK(unpickle(Pickler().json(value).finish(), "test") == value);
  // Tuples read as arrays, and dicts keep their order.
  Pickler p;
  p.begin().string("z").begin().integer(1).string("x").end_tuple().string("a").none().end_dict();
  const Json got = unpickle(p.finish(), "test");
  CHECK(got.dump() == R"({"z":[1,"x"],"a":null})");
}

TEST_CASE("distributed pickle: hostile pickles are FormatErrors", "[distributed]") {
  auto read = [](const std::string& bytes) {
    return format_error([&] { unpickle(bytes, "recv (metadata)"); });
  };
  // os.system("x") as a pickle: a class reference called with REDUCE.
  CHECK(read(raw("\x80\x02"
                 "cos\nsystem\n"
                 "X\x01\x00\x00\x00x"
                 "\x85R.")) ==
        "recv (metadata): unreadable pickle (opcode 0x52 at byte 20: only None, bool, int, float, "
        "str, list, tuple and dict are read)");
  CHECK(read("\x80\x04]\x94(K\x01") == "recv (metadata): unreadable pickle (truncated)");
  CHECK(read(".") ==
        "recv (metadata): unreadable pickle (the pickle does not hold exactly one value)");
  CHECK(read("h\x05.") == "recv (metadata): unreadable pickle (memo entry 5)");
  CHECK(read("a.") == "recv (metadata): unreadable pickle (stack underflow)");
  // Found by fuzz_metadata: a str of invalid UTF-8 failed later, when printed.
  CHECK(read(raw("\x8c\x01\x94.")) ==
        "recv (metadata): unreadable pickle (a str that is not valid UTF-8)");
  CHECK(read("]K\x01K\x02s.") ==
        "recv (metadata): unreadable pickle (items added to the wrong container)");
  CHECK(read("X\xff\xff\xff\x7f"
             "abc.") == "recv (metadata): unreadable pickle (truncated)");
  // l = []; l.append(l)
  CHECK(read(raw("]\x94h\x00"
                 "a.")) == "recv (metadata): unreadable pickle (nested deeper than 64 levels)");
  // Thirty tuples, each holding the previous one twice: 2^31 values from 200 bytes.
  std::string laughs =
      "]\x94"
      "0";
  for (char i = 0; i < 30; ++i) laughs += std::string{'h', i, 'h', i, '\x86', '\x94', '0'};
  laughs += std::string{'h', 30, '.'};
  CHECK(read(laughs) == "recv (metadata): unreadable pickle (more than 4194304 values)");
}

TEST_CASE("distributed metadata: a TensorDict written as Python writes it, and read back",
          "[distributed]") {
  TensorDict td({{"a", at::arange(3, at::kFloat)},
                 {"n", TensorDict({{"b", at::ones({3, 2}, at::kLong)}}, {3})}},
                {3});
  td.set({"n", "s"}, "hi");
  td.set("stack", NonTensorStack::from_list(Json::array({"p", 1, nullptr}), 1));
  const TensorDict packed = td.consolidate();
  const at::Tensor flat = tensordict::detail::consolidated_buffer(packed);
  Json meta =
      unpickle(pickle_metadata(packed, flat, {{"_storage_device", "cpu"}}, "ex.MyData"), "t");
  CHECK(meta.at("_total_bytes") == 64);
  CHECK(meta.at("_storage_device") == "cpu");
  CHECK(meta.at("_tensorclass_type") == "ex.MyData");
  CHECK(meta.at("leaves") == Json{{"a", {"torch.float32", {3}, 0, 16, 4}}});
  CHECK(meta.at("n").at("leaves") == Json{{"b", {"torch.int64", {3, 2}, 16, 64, 0}}});
  CHECK(meta.at("n").at("non_tensors") == Json{{"s", {"hi", {3}, nullptr}}});
  CHECK(meta.at("stack").at("non_tensors").at("2") ==
        Json::array({nullptr, Json::array(), nullptr}));
  CHECK(meta.at("cls_metadata").at("names") == Json::array({nullptr}));

  const auto announced = read_metadata(pickle_metadata(packed, flat, {}, "ex.MyData"), "t");
  CHECK(announced.total_bytes == 64);
  CHECK(announced.max_bytes == 64);
  CHECK_FALSE(announced.meta.contains("_tensorclass_type"));
  const TensorDict back = from_metadata(announced.meta, flat, "test");
  CHECK(back.get("a").equal(td.get("a")));
  CHECK(back.get({"n", "b"}).equal(td.get({"n", "b"})));
  CHECK(back.get_non_tensor({"n", "s"}) == "hi");
  CHECK(back.get_value("stack").non_tensor_stack().tolist() == Json::array({"p", 1, nullptr}));
  CHECK(back.is_consolidated());
}

TEST_CASE("distributed structure check: the first differing key, layouts", "[distributed]") {
  TensorDict sent({{"a", at::arange(3, at::kFloat)},
                   {"n", TensorDict({{"b", at::ones({3, 2}, at::kLong)}}, {3})}},
                  {3});
  const Json meta = describe(sent);  // leaf by leaf: no buffer, offsets 0
  CHECK(meta.at("n").at("leaves").at("b") == Json::array({"torch.int64", {3, 2}, 0, 0, 0}));
  CHECK_NOTHROW(check_matches(meta, sent.clone(), "recv", 0));
  TensorDict here = sent.clone();
  here.set({"n", "b"}, at::ones({3}, at::kLong));
  CHECK_THROWS_WITH(check_matches(meta, here, "recv", 0),
                    "recv: key 'n.b' has shape [3, 2] on rank 0 but [3] here");
  here = sent.clone();
  here.set("c", "text");
  CHECK_THROWS_WITH(check_matches(meta, here, "recv", 0), "recv: key 'c' is not on rank 0");

  const TensorDict packed = sent.consolidate();
  const Json laid_out = describe(packed, tensordict::detail::consolidated_buffer(packed));
  CHECK(same_layout(laid_out, laid_out));
  CHECK_FALSE(same_layout(laid_out, meta));  // same structure, other offsets
}

TEST_CASE("distributed metadata: Python's stacks along dim 1 and lazy stacks", "[distributed]") {
  // NonTensorStack(a, b, stack_dim=1) of two [2]-items: entry i is column i.
  Json m = level(Json::object(), Json::object());
  m["cls_metadata"]["batch_size"] = {2, 2};
  m["cls_metadata"]["names"] = {"t", nullptr};
  const Json stack = {
      {"cls", "NonTensorStack"},
      {"non_tensors", Json::object()},
      {"leaves", Json::object()},
      {"cls_metadata", {{"stack_dim", 0}, {"stack_dim_name", nullptr}, {"is_locked", false}}}};
  m["s"] = stack;
  m["s"]["cls_metadata"]["stack_dim"] = 1;
  for (int i = 0; i < 2; ++i) {
    Json column = stack;
    column["non_tensors"] = {{"0", {std::string("r0c") + char('0' + i), Json::array(), nullptr}},
                             {"1", {std::string("r1c") + char('0' + i), Json::array(), nullptr}}};
    m["s"][std::to_string(i)] = column;
  }
  m["lazy"] = {
      {"cls", "LazyStackedTensorDict"},
      {"non_tensors", Json::object()},
      {"leaves", Json::object()},
      {"cls_metadata", {{"stack_dim", 0}, {"stack_dim_name", nullptr}, {"is_locked", false}}}};
  for (int i = 0; i < 2; ++i) {
    Json row = level({{"y", {"torch.int64", {2}, 16 * i, 16 * i + 16, 0}}}, Json::object());
    row["cls_metadata"]["batch_size"] = {2};
    m["lazy"][std::to_string(i)] = row;
  }
  const at::Tensor flat = at::arange(4, at::kLong).view(at::kByte);
  const TensorDict td = from_metadata(m, flat, "test");
  CHECK(td.get_value("s").non_tensor_stack().tolist() ==
        Json::array({Json::array({"r0c0", "r0c1"}), Json::array({"r1c0", "r1c1"})}));
  CHECK((td.names() == DimNames{std::string("t"), std::nullopt}));
  CHECK(td.get_tensordict("lazy").is_lazy_stack());
  CHECK(td.get({"lazy", "y"}).equal(at::arange(4, at::kLong).view({2, 2})));
}

TEST_CASE("distributed metadata: a malformed description names the key", "[distributed]") {
  const at::Tensor flat = at::zeros({80}, at::kByte);
  Json m = python_metadata();
  m["n"]["leaves"]["b"][3] = 96;
  CHECK(format_error([&] { from_metadata(m, flat, "broadcast"); }) ==
        "broadcast: the metadata of key 'n.b' lies outside the 80-byte buffer (bytes 16 to 96 for "
        "6 int64)");
  m = python_metadata();
  m["leaves"]["a"][0] = "torch.float128";
  CHECK(format_error([&] { from_metadata(m, flat, "broadcast"); }) ==
        "broadcast: the metadata of key 'a' has the unknown dtype 'torch.float128'");
  m = python_metadata();
  m["n"].erase("cls_metadata");
  CHECK(format_error([&] {
          from_metadata(m, flat, "scatter");
        }).rfind("scatter: the metadata of key 'n' is malformed (", 0) == 0);
  // Found by fuzz_metadata: a device torch cannot parse.
  m = python_metadata();
  m["n"]["cls_metadata"]["device"] = "toaster:0";
  CHECK(format_error([&] { from_metadata(m, flat, "recv"); }) ==
        "recv: the metadata of key 'n' has the unknown device \"toaster:0\"");
  // Found by fuzz_metadata: a stack of empty items (a division by zero), one of 2^30 items (an
  // allocation), a pickle of something else than a dict.
  Json stacked = level(Json::object(), Json::object());
  stacked["cls_metadata"]["batch_size"] = {1};
  stacked["s"] = {{"cls", "NonTensorStack"},
                  {"non_tensors", {{"0", {"x", {0}, nullptr}}}},
                  {"leaves", Json::object()},
                  {"cls_metadata", {{"stack_dim", 0}, {"stack_dim_name", nullptr}}}};
  const TensorDict empty_items = from_metadata(stacked, flat, "recv");
  CHECK(empty_items.get_value("s").non_tensor_stack().shape() == std::vector<int64_t>{1, 0});
  stacked["s"]["non_tensors"]["0"][1] = {int64_t{1} << 30};
  CHECK(format_error([&] { from_metadata(stacked, flat, "recv"); }) ==
        "recv: the metadata of key 's' has a stack of shape [1073741824] (at most 4194304 items "
        "are read)");
  CHECK(format_error([&] { read_metadata(Pickler().real(1.5).finish(), "recv"); }) ==
        "recv: the metadata is a number, not a dict");
  CHECK(format_error([&] { read_metadata(Pickler().json(python_metadata()).finish(), "recv"); }) ==
        "recv: the metadata has no _total_bytes; is the peer tensordict?");
}

TEST_CASE("distributed: a tensorclass's Python class name", "[distributed]") {
  CHECK(python_class_name("<class 'torchrl.data.llm.reward.RewardData'>") ==
        "torchrl.data.llm.reward.RewardData");
  CHECK(python_class_name("plain.Name") == "plain.Name");
}

TEST_CASE("distributed pseudo_rand tags follow Python's int_generator", "[distributed]") {
  // tensordict.utils.int_generator(seed) with numpy 1.24.
  CHECK(pseudo_rand_tag(0) == 9651);
  CHECK(pseudo_rand_tag(1) == 1907);
  CHECK(pseudo_rand_tag(2) == 2722);
  // A chain: each output seeds the next.
  CHECK(pseudo_rand_tag(9651) == 847);
  CHECK(pseudo_rand_tag(847) == 536);
  CHECK(pseudo_rand_tag(536) == 9492);
  CHECK_THROWS_AS(pseudo_rand_tag(-1), Error);
}

TEST_CASE("distributed: a buffer a peer announces beyond what this rank accepts is a PeerError",
          "[distributed]") {
  const CommOptions options;
  const Site site = p2p_site("recv", 1, false).part("consolidated buffer");
  CHECK(announced_buffer(16, options, site).numel() == 16);
  // 2^40 bytes is within the format's bound (read_metadata accepts it) but more than this
  // machine's memory (and CI's): refused before any allocation, whatever the overcommit policy.
  CHECK(buffer_limit(options) < (int64_t{1} << 40));
  const Packed empty = pack(TensorDict(), "t");
  CHECK(read_metadata(pickle_metadata(empty.td, empty.flat, {{"_total_bytes", int64_t{1} << 40}}),
                      "t")
            .total_bytes == int64_t{1} << 40);
  try {
    announced_buffer(int64_t{1} << 40, options, site);
    FAIL("no PeerError");
  } catch (const PeerError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("recv (consolidated buffer from rank 1): announced "
                                           "1099511627776 bytes, more than the "));
    CHECK_THAT(e.what(), Catch::Matchers::EndsWith(" bytes this rank accepts (its memory)"));
    CHECK(e.op() == "recv");
    CHECK(e.peer() == 1);
    CHECK(e.phase() == "consolidated buffer");
    CHECK(e.key().empty());
  }
  // A configured cap bounds it further.
  CommOptions capped;
  capped.max_buffer_bytes = 1000;
  CHECK(buffer_limit(capped) == 1000);
  CHECK(announced_buffer(1000, capped, site).numel() == 1000);
  CHECK_THROWS_WITH(announced_buffer(1001, capped, site),
                    "recv (consolidated buffer from rank 1): announced 1001 bytes, more than the "
                    "1000 bytes this rank accepts (CommOptions::max_buffer_bytes)");
  // A cap above the machine's memory does not lift it.
  capped.max_buffer_bytes = int64_t{1} << 50;
  CHECK(buffer_limit(capped) == buffer_limit(options));
}

TEST_CASE("distributed: what the transport throws becomes a PeerError or TimeoutError",
          "[distributed]") {
  const CommOptions options;
  Site site = p2p_site("recv", 0, false).leaf("nest.b");
  CHECK(site.describe() == "recv (key 'nest.b' from rank 0)");
  CHECK(p2p_site("send", 3, true).part("metadata size").describe() ==
        "send (metadata size to rank 3)");
  CHECK(p2p_site("send", 3, true).describe() == "send (to rank 3)");
  Site unknown{"all_reduce", -1, " with", "", "a"};
  CHECK(unknown.describe() == "all_reduce (key 'a' with one of the other ranks)");

  // A Gloo-style std::runtime_error, a c10::Error with its backtrace, and a non-std exception.
  try {
    boundary(site, options, [] {
      throw std::runtime_error("[pair.cc:598] Connection closed by peer [127.0.0.1]:1234");
    });
    FAIL("no exception");
  } catch (const PeerError& e) {
    CHECK(std::string(e.what()) ==
          "recv (key 'nest.b' from rank 0): [pair.cc:598] Connection closed by peer "
          "[127.0.0.1]:1234");
    CHECK(e.cause() == "[pair.cc:598] Connection closed by peer [127.0.0.1]:1234");
    CHECK(e.key() == "nest.b");
    CHECK(e.peer() == 0);
    CHECK(e.op() == "recv");
  }
  try {
    boundary(site, options, [] { TORCH_CHECK(false, "Connection reset\nframe #0: f"); });
    FAIL("no exception");
  } catch (const PeerError& e) {
    CHECK(std::string(e.what()).rfind("recv (key 'nest.b' from rank 0): Connection reset", 0) == 0);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);  // the cause's first line
  }
  CHECK_THROWS_AS(boundary(site, options, [] { throw 7; }), PeerError);
  // Timeouts stay TimeoutErrors (the runtime's), with the same fields.
  CommOptions quick;
  quick.timeout = std::chrono::milliseconds(300);
  try {
    boundary(site, quick, [] { throw std::runtime_error("Timed out waiting 300ms for recv"); });
    FAIL("no exception");
  } catch (const tensordict::TimeoutError& e) {
    CHECK(std::string(e.what()) ==
          "recv (key 'nest.b' from rank 0): timed out after 300 ms (Timed out waiting 300ms for "
          "recv)");
    const auto* failure = dynamic_cast<const PeerFailure*>(&e);
    REQUIRE(failure != nullptr);
    CHECK(failure->key() == "nest.b");
  }
  // The library's own errors pass unchanged.
  CHECK_THROWS_AS(boundary(site, options, [] { throw KeyError("recv: key 'x'"); }), KeyError);
  CHECK_THROWS_WITH(boundary(site, options, [] { throw KeyError("recv: key 'x'"); }),
                    "recv: key 'x'");
  CHECK(boundary(site, options, [] { return 5; }) == 5);
}

TEST_CASE("distributed: a write into a closed connection under SigpipeGuard is EPIPE, not a signal",
          "[distributed]") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  ::close(fds[1]);  // the peer is gone
  const char byte = 'x';
  {
    const SigpipeGuard guard;
    // Without the guard the first write raises SIGPIPE, whose default action ends the process.
    CHECK(::write(fds[0], &byte, 1) == -1);
    CHECK(errno == EPIPE);
    CHECK(::write(fds[0], &byte, 1) == -1);
  }
  ::close(fds[0]);
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  CHECK(sigismember(&pending, SIGPIPE) == 0);  // consumed
  sigset_t mask;
  sigemptyset(&mask);
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  CHECK(sigismember(&mask, SIGPIPE) == 0);  // unblocked again
}
