// The generated headers of tests/accepted/*.yaml compile (this target builds them with warnings as
// errors) and hold the schema's values exactly.
#include "catch2_compat.h"

#include <cmath>
#include <limits>

#include "escaped_defaults.h"
#include "library_names.h"
#include "near_names.h"

TEST_CASE("escaped defaults keep their values", "[generator][accepted]") {
  const accepted::EscapedDefaults::Args args;
  CHECK(args.pos_inf == std::numeric_limits<double>::infinity());
  CHECK(args.neg_inf == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(args.nan));
  CHECK(args.floats == std::vector<double>{std::numeric_limits<double>::infinity(), 1.5});
  CHECK(args.text == std::string("cr\rnul\0tab\tbell\a q\" bs\\ ?\?= \xc3\xa9", 30));
  CHECK(args.texts == std::vector<std::string>{std::string("a\0b", 3), "c)\""});
  CHECK(args.raw ==
        tensordict::Json::parse(R"x({"close": "a)", "delimiter": "b)tc0", "list": [")"]})x"));
  CHECK(args.mustache == "Hello {{name}} {{#x}}{{/x}}");  // user text is never a template
  CHECK(args.int_min == std::numeric_limits<int64_t>::min());
}

TEST_CASE("names close to the generated code's names work", "[generator][accepted]") {
  accepted::inner::Kind kind(accepted::inner::Kind::Args{});
  CHECK(kind.field_std().empty());
  CHECK(kind.c10() == 1);
  CHECK(kind.tensordict() == 3);
  CHECK(kind.string() == "s");
  CHECK_FALSE(kind.nullopt().has_value());
}

TEST_CASE("namespaces and classes named like the libraries' namespaces work",
          "[generator][accepted]") {
  namespace lib = accepted::at::tensordict;
  lib::std inner({at::ones({2})});
  lib::c10 outer({2, 64, inner});
  CHECK(outer.n() == 2);
  CHECK(outer.int64_t() == 64);
  CHECK(outer.inner()->s() == "text");
  CHECK(outer.inner()->x().equal(at::ones({2})));
}
