// A save never deletes what this library did not write: a user's files and directories placed in
// or beside a previous save survive every kind of overwrite, at the same path with the same
// content; an entry where the new save writes is refused before anything is touched; temporaries
// are recognised by their marker, not their name.
#include <ATen/ATen.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "skip.h"
#include "tensordict/archive.h"
#include "tensordict/internal.h"  // the save-step hook: a save that dies midway
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"

using tensordict::FormatError;
using tensordict::Json;
using tensordict::NestedKey;
using tensordict::TensorDict;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;
namespace archive = tensordict::archive;

namespace {

// Two generations of a save: other values and other keys (only the old one has `gone`), with a
// nested TensorDict, non-tensor data and a lazy stack.
TensorDict generation(int gen) {
  TensorDict td({{"x", at::full({2, 3}, gen, at::kFloat)}}, {2});
  td.set({"n", "y"}, at::full({2}, gen, at::kFloat));
  td.set("s", "gen" + std::to_string(gen));
  td.set("ls", tensordict::lazy_stack({TensorDict({{"z", at::full({1}, gen)}}, {}),
                                       TensorDict({{"z", at::full({3}, gen)}}, {})}));
  if (gen == 0) td.set({"gone", "w"}, at::zeros({2}));
  return td;
}

void check_generation(const TensorDict& td, int gen) {
  CHECK(at::equal(td.get("x"), at::full({2, 3}, gen, at::kFloat)));
  CHECK(at::equal(td.get({"n", "y"}), at::full({2}, gen, at::kFloat)));
  CHECK(td.get_non_tensor("s") == "gen" + std::to_string(gen));
  REQUIRE(td.get_tensordict("ls").tensordicts().size() == 2);
  CHECK(at::equal(td.get_tensordict("ls")[1].get("z"), at::full({3}, gen)));
  CHECK(td.contains("gone") == (gen == 0));
}

// A pid no process has: a child that exited and was reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// What a user has at `rels` (relative to `root`): every file's content, every directory, every
// symlink's target, recursively.
using Snapshot = std::map<std::string, std::string>;

void take(const fs::path& root, const std::string& rel, Snapshot& out) {
  const fs::path path = root / rel;
  const fs::file_status st = fs::symlink_status(path);
  if (fs::is_symlink(st)) {
    out[rel] = "symlink to " + fs::read_symlink(path).string();
  } else if (fs::is_directory(st)) {
    out[rel] = "directory";
    for (const auto& e : fs::directory_iterator(path)) {
      take(root, rel + "/" + e.path().filename().string(), out);
    }
  } else if (fs::is_regular_file(st)) {
    out[rel] = "file: " + tc_test::read_file(path.string());
  }
}

Snapshot snapshot(const std::string& root, const std::vector<std::string>& rels) {
  Snapshot out;
  for (const auto& rel : rels) take(root, rel, out);
  return out;
}

// The entries of `before` that are gone or changed in `after`.
std::vector<std::string> lost(const Snapshot& before, const Snapshot& after) {
  std::vector<std::string> out;
  for (const auto& [rel, what] : before) {
    auto it = after.find(rel);
    if (it == after.end() || it->second != what) out.push_back(rel);
  }
  return out;
}

// Files whose content is their own path, under `root`.
void plant_files(const std::string& root, const std::vector<std::string>& rels) {
  for (const auto& rel : rels) {
    fs::create_directories(fs::path(root + "/" + rel).parent_path());
    tc_test::write_file(root + "/" + rel, "user data at " + rel);
  }
}

// The names directly in `dir`, sorted.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Scenario {
  std::string name;
  std::vector<std::string> user;  // the user's entries, relative to the test's directory
  std::function<void(const std::string& root)> plant;  // default: plant_files(user)
};

// Saves `save_old`, plants the user's entries, saves `save_new` over it, and checks that no user
// entry was lost or changed and that nothing else (no temporary, no lock file) was left beside
// the prefix.
void run_scenario(const Scenario& s, const std::function<void(const std::string&)>& save_old,
                  const std::function<void(const std::string&)>& save_new) {
  tc_test::TempDir tmp;
  const std::string prefix = tmp / "td";
  save_old(prefix);
  s.plant ? s.plant(tmp.path()) : plant_files(tmp.path(), s.user);
  const Snapshot before = snapshot(tmp.path(), s.user);
  REQUIRE(before.size() >= s.user.size());
  save_new(prefix);
  const Snapshot after = snapshot(tmp.path(), s.user);
  CHECK(lost(before, after) == std::vector<std::string>{});  // 0 user files lost
  std::vector<std::string> beside = names_in(tmp.path());
  beside.erase(std::remove(beside.begin(), beside.end(), "td"), beside.end());
  for (const auto& name : beside) {  // only the user's own entries beside the prefix
    INFO(name);
    CHECK(std::any_of(s.user.begin(), s.user.end(),
                      [&](const std::string& rel) { return rel.rfind(name, 0) == 0; }));
  }
}

void save_generation(int gen, const std::string& prefix) { generation(gen).memmap(prefix); }

// Entries a user put in and beside a save, one scenario each.
std::vector<Scenario> user_entries() {
  std::vector<Scenario> out = {
      // Files next to the saved tree, some named like the files a save writes.
      {"a data file no key names", {"td/important.memmap"}, {}},
      {"a tensorclass pickle beside a TensorDict", {"td/other.pickle"}, {}},
      {"a NonTensorStack pickle beside a TensorDict", {"td/pickle.pkl"}, {}},
      {"a text file", {"td/notes.txt"}, {}},
      {"a hidden file", {"td/.gitignore"}, {}},
      {"a backup of a data file", {"td/x.memmap.bak"}, {}},
      // Directories inside the prefix.
      {"a directory with its own meta.json",
       {"td/results/meta.json", "td/results/acc.memmap"},
       [](const std::string& root) {
         fs::create_directories(root + "/td/results");
         tc_test::write_file(root + "/td/results/meta.json", R"({"acc": 0.93})");
         tc_test::write_file(root + "/td/results/acc.memmap", "0.93");
       }},
      {"an unrelated earlier save",
       {"td/other_experiment"},
       [](const std::string& root) {
         TensorDict({{"loss", at::arange(5, at::kFloat)}}, {5})
             .memmap(root + "/td/other_experiment");
       }},
      {"a directory without meta.json", {"td/data/a.memmap", "td/data/b.txt"}, {}},
      {"an empty directory",
       {"td/empty"},
       [](const std::string& root) { fs::create_directory(root + "/td/empty"); }},
      {"a symlink to a file outside",
       {"td/link", "outside.txt"},
       [](const std::string& root) {
         tc_test::write_file(root + "/outside.txt", "outside");
         fs::create_symlink("../outside.txt", root + "/td/link");
       }},
      // Inside the directories of the previous save.
      {"a data file in a nested TensorDict's directory", {"td/n/extra.memmap"}, {}},
      {"a text file in a nested TensorDict's directory", {"td/n/notes.txt"}, {}},
      {"a directory with meta.json in a nested directory", {"td/n/sub/meta.json"}, {}},
      {"a directory without meta.json in a nested directory", {"td/n/plain/file.txt"}, {}},
      {"a file in a NonTensorData's directory", {"td/s/notes.txt"}, {}},
      {"a file in a lazy stack's directory", {"td/ls/notes.txt"}, {}},
      {"a stack element after a gap (not an element)", {"td/ls/5/z.memmap"}, {}},
      {"a file in a stack element's directory", {"td/ls/0/notes.txt"}, {}},
      {"a file in a directory whose key the new save drops", {"td/gone/notes.txt"}, {}},
      {"files at every level at once",
       {"td/important.memmap", "td/n/notes.txt", "td/ls/1/a.memmap", "td/gone/w.memmap.orig"},
       {}},
  };
  return out;
}

}  // namespace

TEST_CASE("a save keeps every entry of a previous save that it did not write", "[io][overwrite]") {
  for (const Scenario& s : user_entries()) {
    DYNAMIC_SECTION(s.name) {
      run_scenario(
          s, [](const std::string& p) { save_generation(0, p); },
          [](const std::string& p) { save_generation(1, p); });
    }
  }
  SECTION("the new save loads whole, the kept entries do not show in it") {
    tc_test::TempDir tmp;
    save_generation(0, tmp / "td");
    plant_files(tmp.path(), {"td/important.memmap", "td/gone/notes.txt", "td/n/extra.memmap"});
    save_generation(1, tmp / "td");
    TensorDict back = TensorDict::load_memmap(tmp / "td");
    check_generation(back, 1);
    CHECK(back.keys() == generation(1).keys());
    CHECK_FALSE(back.contains("important"));
    CHECK_FALSE(back.get_tensordict("n").contains("extra"));
    CHECK(memmap::verify(tmp / "td").empty());
    // `gone/` holds only the user's file now (no meta.json): the next save keeps it whole.
    CHECK(names_in(tmp / "td/gone") == std::vector<std::string>{"notes.txt"});
    save_generation(0, tmp / "td");
    check_generation(TensorDict::load_memmap(tmp / "td"), 0);
    CHECK(tc_test::read_file(tmp / "td/gone/notes.txt") == "user data at td/gone/notes.txt");
  }
}

TEST_CASE("a user's directory where the new save writes one is merged into it", "[io][overwrite]") {
  const Scenario merged{"a directory of the user's, a nested key of the new save",
                        {"td/extra/notes.txt", "td/extra/deeper/data.bin"},
                        {}};
  run_scenario(
      merged, [](const std::string& p) { save_generation(0, p); },
      [](const std::string& p) {
        TensorDict next = generation(1);
        next.set({"extra", "v"}, at::ones({2}));
        next.memmap(p);
      });
  tc_test::TempDir tmp;
  save_generation(0, tmp / "td");
  plant_files(tmp.path(), merged.user);
  TensorDict next = generation(1);
  next.set({"extra", "v"}, at::ones({2}));
  next.memmap(tmp / "td");
  CHECK(at::equal(TensorDict::load_memmap(tmp / "td").get({"extra", "v"}), at::ones({2})));
  CHECK(names_in(tmp / "td/extra") ==
        std::vector<std::string>{"deeper", "meta.json", "notes.txt", "v.memmap"});
}

TEST_CASE("every kind of save keeps a user's entries", "[io][overwrite]") {
  const Scenario files{"user files at three levels",
                       {"td/important.memmap", "td/results/meta.json", "td/n/notes.txt"},
                       {}};
  tensordict::MemmapOptions copy;
  copy.copy_existing = true;
  SECTION("copy_existing, leaves mapping another save's files") {
    run_scenario(
        files, [](const std::string& p) { save_generation(0, p); },
        [&](const std::string& p) {
          const std::string src_dir = (fs::path(p).parent_path() / "src").string();
          const TensorDict src = generation(1).memmap(src_dir);
          src.memmap(p, copy);
          fs::remove_all(src_dir);
        });
  }
  SECTION("memmap_ at its own prefix (hard-linked leaves)") {
    TensorDict td = generation(0);
    run_scenario(
        files, [&](const std::string& p) { td.memmap_(p); },
        [&](const std::string& p) {
          td.get("x").fill_(7);
          td.memmap_(p);
        });
  }
  SECTION("memmap_refresh_") {
    TensorDict td = generation(0);
    run_scenario(
        files, [&](const std::string& p) { td.memmap_(p); },
        [&](const std::string&) { td.memmap_refresh_(); });
  }
  SECTION("memmap_like and memmap_async") {
    run_scenario(
        files, [](const std::string& p) { save_generation(0, p); },
        [](const std::string& p) { generation(1).memmap_like(p); });
    run_scenario(
        files, [](const std::string& p) { save_generation(0, p); },
        [](const std::string& p) { generation(1).memmap_async(p).get(); });
  }
  SECTION("unpack_memmap over a previous save") {
    run_scenario(
        files, [](const std::string& p) { save_generation(0, p); },
        [](const std::string& p) {
          const std::string tdz = (fs::path(p).parent_path() / "x.tdz").string();
          generation(1).save(tdz);
          archive::unpack_memmap(tdz, p, false);
          fs::remove(tdz);
        });
  }
  SECTION("tensorclass saves") {
    const memmap::ClassInfo info{"<class 'my.mod.Obs'>", Json{{"extra", nullptr}}};
    const Scenario in_class{
        "user files beside and inside a tensorclass",
        {"td/notes.txt", "td/_tensordict/notes.txt", "td/_tensordict/n/extra.memmap"},
        {}};
    run_scenario(
        in_class, [&](const std::string& p) { memmap::save_tensorclass(generation(0), info, p); },
        [&](const std::string& p) { memmap::save_tensorclass(generation(1), info, p); });
    tc_test::TempDir tmp;
    memmap::save_tensorclass(generation(0), info, tmp / "td");
    plant_files(tmp.path(), in_class.user);
    TensorDict loaded = TensorDict::load_memmap(tmp / "td");  // remembers its class
    loaded.memmap(tmp / "td", copy);
    CHECK(memmap::load(tmp / "td").class_info->type == info.type);
    for (const auto& rel : in_class.user) CHECK(fs::is_regular_file(tmp / rel));
  }
}

TEST_CASE("a user's entry where the new save writes a file is refused, nothing touched",
          "[io][overwrite]") {
  struct Collision {
    std::string user;   // the user's file, relative to the prefix
    NestedKey key;      // what the new save adds
    std::string held;   // the entry the message names, relative to the prefix
    std::string wrote;  // the new save's entry in the message, relative to the prefix
  };
  const std::vector<Collision> collisions = {
      {"extra.memmap", NestedKey("extra"), "extra.memmap", "extra.memmap"},  // a leaf's file
      {"extra", NestedKey({"extra", "v"}), "extra", "extra"},  // a file where a directory goes
      {"n/z.memmap", NestedKey({"n", "z"}), "n/z.memmap", "n/z.memmap"},  // in a nested directory
      // A directory of the user's is merged with the new save's, down to the colliding file.
      {"results/meta.json", NestedKey({"results", "v"}), "results/meta.json", "results/meta.json"},
  };
  for (const Collision& c : collisions) {
    DYNAMIC_SECTION(c.user) {
      tc_test::TempDir tmp;
      const std::string prefix = tmp / "td";
      save_generation(0, prefix);
      plant_files(prefix, {c.user});
      TensorDict next = generation(1);
      next.set(c.key, at::ones({2}));
      CHECK_THROWS_WITH(next.memmap(prefix),
                        "refusing to replace '" + prefix + "': it holds '" + prefix + "/" + c.held +
                            "', which the previous save did not write, and the new save writes '" +
                            prefix + "/" + c.wrote + "'; move it away or save elsewhere");
      CHECK(tc_test::read_file(prefix + "/" + c.user) == "user data at " + c.user);
      check_generation(TensorDict::load_memmap(prefix), 0);
      CHECK(names_in(tmp.path()) == std::vector<std::string>{"td"});
    }
  }
}

TEST_CASE("only marked temporaries of dead processes are removed beside a target",
          "[io][overwrite]") {
  const std::string dead = std::to_string(dead_pid());
  // Names of temporaries, none holding a valid marker for their target.
  const std::vector<std::string> look_alikes = {
      ".td.tc-" + dead + "-0/work/x.memmap",  // a directory of a user's
      ".td.tc-" + dead + "-1",                // a file
      ".td.tc-" + dead + "-2/.tc-temporary",  // a marker that is not the library's
      ".td.tc-" + dead + "-3/.tc-temporary",  // the library's marker, for another target
      ".td.tc-lock",                          // a user's file named like the save lock
      ".x.tdz.tc-tdz-" + dead + "-0/work/td/meta.json",
      ".c.bin.tc-cons-" + dead + "-0",
  };
  tc_test::TempDir tmp;
  plant_files(tmp.path(), look_alikes);
  tc_test::write_file(tmp / (".td.tc-" + dead + "-3/.tc-temporary"),
                      "tensordict temporary\npid " + dead + "\nwork 1 2\ntarget other");
  const Snapshot before = snapshot(tmp.path(), look_alikes);
  save_generation(0, tmp / "td");
  save_generation(1, tmp / "td");
  generation(1).save(tmp / "x.tdz");
  generation(1).select({"x"}).consolidate(tmp / "c.bin");
  generation(1).select({"x"}).consolidate(tmp / "c.bin");
  CHECK(lost(before, snapshot(tmp.path(), look_alikes)) == std::vector<std::string>{});
  check_generation(TensorDict::load_memmap(tmp / "td"), 1);

  SECTION("a real temporary of a process that is gone is removed") {
    const pid_t child = ::fork();
    if (child == 0) {  // dies after writing its first leaf: its temporary stays behind
      memmap::detail::set_save_step_hook([](const char*) { ::_exit(0); });
      generation(1).memmap(tmp / "td");
      ::_exit(1);
    }
    ::waitpid(child, nullptr, 0);
    std::string left;
    for (const auto& name : names_in(tmp.path())) {
      if (name.rfind(".td.tc-" + std::to_string(child) + "-", 0) == 0) left = tmp / name;
    }
    REQUIRE(fs::exists(left + "/.tc-temporary"));
    save_generation(0, tmp / "td");
    CHECK_FALSE(fs::exists(left));
    CHECK(lost(before, snapshot(tmp.path(), look_alikes)) == std::vector<std::string>{});
  }
}

TEST_CASE("an archive is replaced only when a save wrote it", "[io][overwrite][tdz]") {
  tc_test::TempDir tmp;
  const std::string target = tmp / "x.tdz";
  TensorDict td = generation(1);
  // An archive with an entry a user added: unpacked, a file added, packed again.
  generation(0).save(target);
  archive::unpack_memmap(target, tmp / "dir", false);
  tc_test::write_file(tmp / "dir/notes.txt", "keep me");
  archive::pack_memmap(tmp / "dir", target);
  const std::string packed = tc_test::read_file(target);
  CHECK_THROWS_WITH(td.save(target), "refusing to replace '" + target +
                                         "': it holds the entry 'notes.txt', which a save does "
                                         "not write; move the archive away or save elsewhere");
  CHECK(tc_test::read_file(target) == packed);
  // A zip with a meta.json that is not a save's.
  fs::remove_all(tmp / "dir");
  fs::create_directory(tmp / "dir");
  tc_test::write_file(tmp / "dir/meta.json", R"({"name": "my project"})");
  archive::pack_memmap(tmp / "dir", tmp / "project.tdz");
  CHECK_THROWS_WITH(td.save(tmp / "project.tdz"),
                    Catch::Matchers::ContainsSubstring("is not a memmap archive"));
  // An archive a save wrote is replaced, and nothing is left beside it.
  fs::remove(target);
  generation(0).save(target);
  td.save(target);
  check_generation(TensorDict::load_memmap(target), 1);
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"dir", "project.tdz", "x.tdz"});
}

namespace {

// A directory a user wrote: a meta.json of the user's own (some of it shaped like a save's) and
// the files beside it.
struct UserTree {
  std::string name;
  std::string meta;                 // the user's meta.json
  std::vector<std::string> beside;  // files beside it, relative to the directory
  std::string problem;              // why it is no save; {dir}: the directory
};

const std::string kTdType = memmap::kTensorDictType;

std::vector<UserTree> user_trees() {
  return {
      {"an application's config with a \"_type\" of its own",
       R"({"_type": "my app config", "secret": 1})",
       {},
       R"('{dir}/meta.json': "_type" "my app config" is not a class as Python writes one )"
       R"(("<class 'module.Name'>"))"},
      {"a \"_type\" and a batch size, notes beside",
       R"({"_type": "mine", "shape": []})",
       {"notes.txt"},
       R"('{dir}/meta.json': "_type" "mine" is not a class as Python writes one )"
       R"(("<class 'module.Name'>"))"},
      {"a \"_type\" that is no string",
       R"({"_type": 5})",
       {},
       "'{dir}/meta.json': no \"_type\" string"},
      {"not a JSON object", R"([1, 2])", {}, "'{dir}/meta.json' is not a JSON object"},
      {"not JSON", "_type: mine", {}, "'{dir}/meta.json': "},
      {"a TensorDict's _type without a batch size",
       R"({"_type": ")" + kTdType + R"(", "secret": 1})",
       {},
       R"('{dir}/meta.json': "shape" is missing or not a list of sizes (a TensorDict's batch size))"},
      {"a TensorDict's _type, an entry no save writes",
       R"({"_type": ")" + kTdType + R"(", "shape": [], "secret": 1})",
       {},
       R"('{dir}/meta.json': entry "secret" is neither a tensor ({"dtype", "shape"}) nor a )"
       R"(collection ({"type"}))"},
      {"a TensorDict's meta.json without the data it names",
       R"({"_type": ")" + kTdType +
           R"(", "shape": [], "w": {"dtype": "torch.float32", "shape": [2]}})",
       {"notes.txt"},
       "'{dir}/w.memmap' is missing or not a file (the save that wrote meta.json did)"},
      {"a TensorDict's meta.json without the child directory it names",
       R"({"_type": ")" + kTdType + R"(", "shape": [], "n": {"type": "TensorDict"}})",
       {"n"},
       "'{dir}/n' is missing or not a directory (the save that wrote meta.json did)"},
      {"a class without _tensordict/",
       R"({"_type": "<class 'my.app.Config'>", "secret": 1})",
       {"notes.txt"},
       "'{dir}/_tensordict' is missing or not a directory (the save that wrote meta.json did)"},
      {"a lazy stack without elements",
       R"({"_type": ")" + std::string(memmap::kLazyStackType) + R"(", "stack_dim": 0})",
       {},
       "'{dir}/0' is missing or not a directory (the save that wrote meta.json did)"},
  };
}

}  // namespace

TEST_CASE("a save replaces only what a save wrote: a user's meta.json is refused, untouched",
          "[io][overwrite]") {
  for (const UserTree& u : user_trees()) {
    DYNAMIC_SECTION(u.name) {
      tc_test::TempDir tmp;
      const std::string dir = tmp / "td";
      fs::create_directory(dir);
      tc_test::write_file(dir + "/meta.json", u.meta);
      for (const auto& rel : u.beside) tc_test::write_file(dir + "/" + rel, "user data at " + rel);
      std::vector<std::string> rels{"td/meta.json"};
      for (const auto& rel : u.beside) rels.push_back("td/" + rel);
      const Snapshot before = snapshot(tmp.path(), rels);
      const std::string refusal =
          "refusing to replace '" + dir +
          "': it is not a directory that Python tensordict or this library saved (" +
          tc_test::expand(u.problem, "{dir}", dir);
      for (bool like : {false, true}) {
        INFO((like ? "memmap_like" : "memmap"));
        CHECK_THROWS_WITH(like ? generation(1).memmap_like(dir) : generation(1).memmap(dir),
                          Catch::Matchers::StartsWith(refusal) &&
                              Catch::Matchers::EndsWith("; move it away or save elsewhere"));
      }
      CHECK(lost(before, snapshot(tmp.path(), rels)) == std::vector<std::string>{});
      CHECK(names_in(tmp.path()) == std::vector<std::string>{"td"});
      std::vector<std::string> inside = u.beside;
      inside.push_back("meta.json");
      std::sort(inside.begin(), inside.end());
      CHECK(names_in(dir) == inside);  // nothing added either

      // The same tree packed into an archive is not replaced by an archive save.
      const std::string arc = tmp / "td.tdz";
      archive::pack_memmap(dir, arc);
      const std::string packed = tc_test::read_file(arc);
      CHECK_THROWS_WITH(generation(1).save(arc),
                        Catch::Matchers::StartsWith("refusing to replace '" + arc +
                                                    "': it is not a memmap archive this library "
                                                    "may replace"));
      CHECK(tc_test::read_file(arc) == packed);
    }
  }
}

TEST_CASE("Python's saves of every kind are recognised and replaced, a user's files kept",
          "[io][overwrite][needs-fixtures]") {
  const fs::path fixtures = fs::path(TC_FIXTURES_DIR) / "python-tensordict";
  if (!fs::is_directory(fixtures)) TC_SKIP("fixtures folder " << fixtures.string() << " is absent");
  for (const auto& entry : fs::directory_iterator(fixtures)) {
    const std::string name = entry.path().filename().string();
    if (!fs::is_directory(entry.path() / "td")) continue;
    DYNAMIC_SECTION(name) {
      tc_test::TempDir tmp;
      const std::string dir = tmp / "td";
      fs::copy(entry.path() / "td", dir, fs::copy_options::recursive);
      tc_test::write_file(dir + "/notes.txt", "mine");
      generation(1).memmap(dir);
      check_generation(TensorDict::load_memmap(dir), 1);
      CHECK(tc_test::read_file(dir + "/notes.txt") == "mine");
      // Packed by this library, as Python packs it: replaced too.
      fs::remove(dir + "/notes.txt");
      fs::remove_all(tmp / "py");
      fs::copy(entry.path() / "td", tmp / "py", fs::copy_options::recursive);
      archive::pack_memmap(tmp / "py", tmp / "py.tdz");
      generation(1).save(tmp / "py.tdz");
      check_generation(TensorDict::load_memmap(tmp / "py.tdz"), 1);
    }
  }
}

TEST_CASE("a user's meta.json inside a save is the user's, and so is what is beside it",
          "[io][overwrite]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  save_generation(0, dir);
  // The nested TensorDict's meta.json replaced by a user's, a file beside it.
  tc_test::write_file(dir + "/n/meta.json", R"({"_type": "my notes", "y": 1})");
  tc_test::write_file(dir + "/n/y.memmap.txt", "mine");
  // The new save writes `n/` too: the user's meta.json is where the new save writes one.
  CHECK_THROWS_WITH(generation(1).memmap(dir),
                    "refusing to replace '" + dir + "': it holds '" + dir +
                        "/n/meta.json', which the previous save did not write, and the new save "
                        "writes '" +
                        dir + "/n/meta.json'; move it away or save elsewhere");
  CHECK(tc_test::read_file(dir + "/n/meta.json") == R"({"_type": "my notes", "y": 1})");
  // A new save without `n` keeps the user's directory whole.
  TensorDict next = generation(1);
  next.del_("n");
  next.memmap(dir);
  CHECK(tc_test::read_file(dir + "/n/meta.json") == R"({"_type": "my notes", "y": 1})");
  CHECK(tc_test::read_file(dir + "/n/y.memmap.txt") == "mine");
  CHECK(fs::is_regular_file(dir + "/n/y.memmap"));  // the old save's leaf, under a user's meta.json
}
