// Python-compatible JSON spelling (the bytes Python's json module writes).
#include "catch2_compat.h"
#include <cmath>

#include "tensordict/errors.h"
#include "tensordict/json.h"

using namespace tensordict;

TEST_CASE("floats are spelled as Python's repr", "[json]") {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.1, "0.1"},
      {1.0, "1.0"},
      {1e16, "1e+16"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {-2.5, "-2.5"},
      {123456789.0, "123456789.0"},
      {1.5e300, "1.5e+300"},
      {0.30000000000000004, "0.30000000000000004"},
      {2.0 / 3.0, "0.6666666666666666"},
      {1e15, "1000000000000000.0"},
      {-0.0, "-0.0"},
  };
  for (const auto& [value, text] : cases) {
    INFO(text);
    CHECK(python_float_repr(value) == text);
  }
}

TEST_CASE("dumps_python matches Python's json.dumps", "[json]") {
  Json obj = Json::object();
  obj["device"] = "cpu";
  obj["shape"] = {2, 1};
  obj["f"] = 3.0;
  obj["ok"] = true;
  obj["none"] = nullptr;
  CHECK(dumps_python(obj) ==
        R"({"device": "cpu", "shape": [2, 1], "f": 3.0, "ok": true, "none": null})");
  CHECK(dumps_python(obj, {true, true}) ==
        R"({"device":"cpu","shape":[2,1],"f":3.0,"ok":true,"none":null})");

  // ensure_ascii escapes non-ASCII as UTF-16 (astral characters as surrogate pairs).
  const Json text = "h\xC3\xA9llo \xE2\x9C\x93 \"q\" \xF0\x9F\x98\x80\n";
  CHECK(dumps_python(text) == R"("h\u00e9llo \u2713 \"q\" \ud83d\ude00\n")");
  CHECK(dumps_python(text, {false, false}) ==
        "\"h\xC3\xA9llo \xE2\x9C\x93 \\\"q\\\" \xF0\x9F\x98\x80\\n\"");
  CHECK(dumps_python(Json(std::nan(""))) == "NaN");
  CHECK(dumps_python(Json(-HUGE_VAL)) == "-Infinity");
}

TEST_CASE("parse_json accepts Python's non-finite tokens but not inside strings", "[json]") {
  Json v = parse_json(R"({"a": NaN, "b": [Infinity, -Infinity], "s": "NaN is fine"})");
  CHECK(std::isnan(v["a"].get<double>()));
  CHECK(v["b"][0].get<double>() == HUGE_VAL);
  CHECK(v["b"][1].get<double>() == -HUGE_VAL);
  CHECK(v["s"] == "NaN is fine");
  CHECK(parse_json(dumps_python(Json{{"k", "\xE2\x9C\x93"}})) == Json{{"k", "\xE2\x9C\x93"}});
  CHECK_THROWS_AS(parse_json("{\"a\": ", "x/meta.json"), FormatError);
  try {
    parse_json("{oops}", "x/meta.json");
  } catch (const FormatError& e) {
    CHECK(std::string(e.what()).rfind("x/meta.json: malformed JSON", 0) == 0);
  }
}

TEST_CASE("parse_json bounds nesting and refuses duplicate keys", "[json]") {
  const auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']');
  };
  CHECK(parse_json(nested(kMaxJsonDepth)).is_array());
  CHECK_THROWS_WITH(parse_json(nested(kMaxJsonDepth + 1), "m.json"),
                    "m.json: JSON nested deeper than 1000 levels");
  CHECK_THROWS_WITH(parse_json("{\"a\": " + nested(100000) + "}", "m.json"),
                    "m.json: JSON nested deeper than 1000 levels");
  CHECK_THROWS_WITH(parse_json(R"({"a": 1, "b": {"a": 2, "a": 3}})", "m.json"),
                    "m.json: duplicate key \"a\"");
  CHECK_THROWS_WITH(parse_json(R"({"a": NaN, "a": 1})", "m.json"), "m.json: duplicate key \"a\"");
  CHECK(parse_json(R"([{"a": 1}, {"a": 2}])") == Json::parse(R"([{"a": 1}, {"a": 2}])"));
}

TEST_CASE("parse_json keeps the order of 100k keys and refuses a duplicate among them", "[json]") {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  const tensordict::Json parsed = tensordict::parse_json(text + "}");
  REQUIRE(parsed.size() == 100000);
  CHECK(parsed.begin().key() == "k0");
  CHECK((--parsed.end()).key() == "k99999");
  CHECK(parsed["k4242"] == 4242);
  CHECK_THROWS_WITH(tensordict::parse_json(text + ",\"k7\":0}", "big.json"),
                    "big.json: duplicate key \"k7\"");
}
