// What a save owns in a tree, read from its meta.json files, so that a save replacing it keeps
// everything else (a user's files beside or inside the saved tree); and the move that keeps them.
// Shared by directory saves (memmap/atomic.cpp), the recovery of killed saves
// (memmap/temporary.cpp) and archive writes (memmap/archive.cpp, over a zip's entries).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "memmap/internal.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace tensordict::memmap::detail {
namespace fs = std::filesystem;
namespace {

std::string join_rel(const std::string& rel, const std::string& name) {
  return rel.empty() ? name : rel + "/" + name;
}

class DirectoryView : public TreeView {
 public:
  explicit DirectoryView(std::string root) : root_(std::move(root)) {}

  Kind kind(const std::string& rel) const override {
    struct stat st {};
    if (::lstat(at(rel).c_str(), &st) != 0) return Kind::None;
    if (S_ISREG(st.st_mode)) return Kind::File;
    return S_ISDIR(st.st_mode) ? Kind::Dir : Kind::Other;
  }

  std::vector<std::string> list(const std::string& rel) const override {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(at(rel), ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    // An unreadable directory would be deleted whole with the tree: refuse instead.
    if (ec) throw FormatError("cannot list '" + at(rel) + "': " + ec.message());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::optional<std::string> text(const std::string& rel) const override {
    try {
      return read_text(at(rel));
    } catch (const Error&) {
      return std::nullopt;
    }
  }

 private:
  std::string at(const std::string& rel) const { return rel.empty() ? root_ : join(root_, rel); }
  std::string root_;
};

// One part of a dotted Python name: an identifier (non-ASCII letters are UTF-8 bytes), or
// `<locals>`, Python's part for a class made inside a function.
bool is_name_part(std::string_view part) {
  if (part == "<locals>") return true;
  if (part.empty() || (part.front() >= '0' && part.front() <= '9')) return false;
  return std::all_of(part.begin(), part.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || c == '_' || c >= 0x80;
  });
}

bool is_sizes(const Json& shape) {
  return shape.is_array() && std::all_of(shape.begin(), shape.end(), [](const Json& d) {
           return d.is_number_unsigned() || (d.is_number_integer() && d.get<int64_t>() >= 0);
         });
}

// A TensorDict's meta.json: a batch size, its version's entries as format_version.h reads them,
// and every other entry a leaf ({"dtype": ..., "shape": [...]}) or a child ({"type": ...}).
std::string tensordict_problem(const Json& meta, int64_t version, const std::string& type) {
  std::string problem = format::class_problem(meta, version, type);
  if (!problem.empty()) return problem;
  const auto shape = meta.find("shape");
  if (shape == meta.end() || !is_sizes(*shape)) {
    return "\"shape\" is missing or not a list of sizes (a TensorDict's batch size)";
  }
  problem = format::names_of(meta, version, shape->size()).problem;
  if (!problem.empty()) return problem;
  for (const auto& [key, entry] : meta.items()) {
    if (format::is_format_entry(key, version)) continue;
    const bool child = entry.is_object() && entry.contains("type") && entry["type"].is_string();
    const bool leaf = entry.is_object() && entry.contains("dtype") && entry["dtype"].is_string() &&
                      entry.contains("shape") && is_sizes(entry["shape"]);
    if (!child && !leaf) {
      return "entry " + Json(key).dump() +
             " is neither a tensor ({\"dtype\", \"shape\"}) nor a collection ({\"type\"})";
    }
  }
  return {};
}

// What a save writes beside a meta.json it wrote: the data of every leaf that has any, the
// directory of every child, a tensorclass's `_tensordict/`, a lazy stack's first element.
std::string tree_problem(const TreeView& tree, const Json& meta, const std::string& type,
                         const std::function<std::string(const std::string&)>& where) {
  auto first = [&tree](const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      const TreeView::Kind kind = tree.kind(name);
      if (kind != TreeView::Kind::None) return kind;
    }
    return TreeView::Kind::None;
  };
  auto missing = [&where](const std::string& what, const std::string& rel) {
    return where(rel) + " is missing or not a " + what + " (the save that wrote meta.json did)";
  };
  if (type == kTensorDictType || type == kSubTensorDictType) {
    const int64_t version = format::version_of(meta).version;
    for (const auto& [key, entry] : meta.items()) {
      if (format::is_format_entry(key, version)) continue;
      if (entry.contains("type")) {
        if (first(entry_names(key, "", true)) != TreeView::Kind::Dir) {
          return missing("directory", encode_key(key));
        }
        continue;
      }
      const Json& shape = entry["shape"];
      const bool no_data = std::any_of(shape.begin(), shape.end(),
                                       [](const Json& d) { return d.get<uint64_t>() == 0; });
      if (!no_data && first(entry_names(key, ".memmap", false)) != TreeView::Kind::File) {
        return missing("file", encode_key(key) + ".memmap");
      }
    }
  } else if (type == kLazyStackType) {
    if (tree.kind("0") != TreeView::Kind::Dir) return missing("directory", "0");
  } else if (type == kNonTensorDataType || is_metadata_type(type)) {
    if (!meta.contains("data") && tree.kind("other.pickle") != TreeView::Kind::File) {
      return where("meta.json") + ": NonTensorData without \"data\" or other.pickle";
    }
  } else if (type != kNonTensorStackType && tree.kind("_tensordict") != TreeView::Kind::Dir) {
    return missing("directory", "_tensordict");  // a tensorclass
  }
  return {};
}

// Why the meta.json object `meta` is not one Python tensordict or this library writes; "" when it
// is one. Only the level itself is read: what it names is tree_problem's.
std::string meta_problem(const Json& meta) {
  const auto type_it = meta.find("_type");
  if (type_it == meta.end() || !type_it->is_string()) return "no \"_type\" string";
  const std::string type = type_it->get<std::string>();
  if (!is_python_class(type)) {
    return "\"_type\" " + type_it->dump() +
           " is not a class as Python writes one (\"<class 'module.Name'>\")";
  }
  // What a save of a newer format owns is not known here: replacing it could lose a user's files.
  const format::Version version = format::version_of(meta);
  if (!version.problem.empty()) return version.problem;
  if (type == kTensorDictType || type == kSubTensorDictType) {
    return tensordict_problem(meta, version.version, type);
  }
  if (type == kLazyStackType) {
    const auto dim = meta.find("stack_dim");
    if (dim != meta.end() && !dim->is_number_integer()) return "\"stack_dim\" is not an integer";
    return format::class_problem(meta, version.version, type);
  }
  return {};
}

// One level of the walk: the names its meta.json gives to its files and directories.
class OwnershipWalk {
 public:
  explicit OwnershipWalk(const TreeView& tree) : tree_(tree) {}

  void level(const std::string& rel) {
    std::set<std::string> owned;
    const std::optional<Json> meta = read_meta(rel);
    if (meta) {
      owned.insert("meta.json");
      const auto type_it = meta->find("_type");
      const std::string type = type_it != meta->end() && type_it->is_string()
                                   ? type_it->get<std::string>()
                                   : std::string();
      if (type == kTensorDictType || type == kSubTensorDictType) {
        tensordict_level(rel, *meta, owned);
      } else if (type == kNonTensorDataType || is_metadata_type(type)) {
        own_file(rel, "other.pickle", owned);
      } else if (type == kNonTensorStackType) {
        own_file(rel, "pickle.pkl", owned);
        if (!meta->contains("data")) own_elements(rel, owned);
      } else if (type == kLazyStackType) {
        own_elements(rel, owned);
      } else {  // a tensorclass (Python's lazy views keep their source in `_source/`)
        own_file(rel, "other.pickle", owned);
        own_file(rel, kSchemaVersionFile, owned);
        own_dir(rel, "_tensordict", owned);
        own_dir(rel, "_source", owned);
      }
    }
    for (const std::string& name : tree_.list(rel)) {
      if (!owned.count(name)) foreign.push_back(join_rel(rel, name));
    }
    for (const std::string& name : dirs_of(rel)) level(join_rel(rel, name));
  }

  std::vector<std::string> foreign;

 private:
  std::optional<Json> read_meta(const std::string& rel) {
    const std::string path = join_rel(rel, "meta.json");
    if (tree_.kind(path) != TreeView::Kind::File) return std::nullopt;
    const auto text = tree_.text(path);
    if (!text) return std::nullopt;
    try {
      // A level owns its entries only when its meta.json is one a save writes: a user's
      // meta.json in a save's directory is the user's, as is everything beside it.
      Json meta = parse_json(*text, "'" + path + "'");
      if (meta.is_object() && meta_problem(meta).empty()) return meta;
    } catch (const Error&) {
    } catch (const Json::exception&) {
    }
    return std::nullopt;
  }

  void tensordict_level(const std::string& rel, const Json& meta, std::set<std::string>& owned) {
    const int64_t version = format::version_of(meta).version;
    for (const auto& [key, entry] : meta.items()) {
      if (format::is_format_entry(key, version) || !entry.is_object()) continue;
      if (entry.contains("type")) {
        own_first(rel, entry_names(key, "", true), TreeView::Kind::Dir, owned);
        continue;
      }
      own_first(rel, entry_names(key, ".memmap", false), TreeView::Kind::File, owned);
      const auto nested = entry.find("is_nested");
      if (nested != entry.end() && nested->is_boolean() && nested->get<bool>()) {
        own_file(rel, encode_key(key) + ".shape.memmap", owned);  // Python's jagged layout
      }
    }
  }

  // As the reader: the first of the names that exists is the entry's, and it is the save's only
  // when it has the kind the save writes (a symlink in its place is someone else's).
  void own_first(const std::string& rel, const std::vector<std::string>& names, TreeView::Kind kind,
                 std::set<std::string>& owned) {
    for (const std::string& name : names) {
      const TreeView::Kind found = tree_.kind(join_rel(rel, name));
      if (found == TreeView::Kind::None) continue;
      if (found == kind) own(rel, name, kind, owned);
      return;
    }
  }

  void own_file(const std::string& rel, const std::string& name, std::set<std::string>& owned) {
    own_first(rel, {name}, TreeView::Kind::File, owned);
  }
  void own_dir(const std::string& rel, const std::string& name, std::set<std::string>& owned) {
    own_first(rel, {name}, TreeView::Kind::Dir, owned);
  }

  // Stack elements 0/, 1/, ... up to the first gap, as the reader reads them.
  void own_elements(const std::string& rel, std::set<std::string>& owned) {
    for (size_t i = 0;; ++i) {
      const std::string name = std::to_string(i);
      if (tree_.kind(join_rel(rel, name)) != TreeView::Kind::Dir) return;
      own(rel, name, TreeView::Kind::Dir, owned);
    }
  }

  void own(const std::string& rel, const std::string& name, TreeView::Kind kind,
           std::set<std::string>& owned) {
    owned.insert(name);
    if (kind == TreeView::Kind::Dir) child_dirs_[rel].insert(name);
  }

  std::set<std::string> dirs_of(const std::string& rel) {
    auto it = child_dirs_.find(rel);
    return it == child_dirs_.end() ? std::set<std::string>() : std::move(it->second);
  }

  const TreeView& tree_;
  std::map<std::string, std::set<std::string>> child_dirs_;
};

// rename() that never replaces `to` (renameat2 RENAME_NOREPLACE, else a check before rename).
bool rename_noreplace(const std::string& from, const std::string& to) {
  if (::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
    return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) {
    errno = EEXIST;
    return false;
  }
  return ::rename(from.c_str(), to.c_str()) == 0;
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Creates the directories of `rel` above its last component under `root` (their parents go to
// `made`); false (errno set) when one of them exists and is not a directory.
bool make_parents(const std::string& root, const std::string& rel, std::set<std::string>& made) {
  for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
    const std::string dir = join(root, rel.substr(0, slash));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      errno = ENOTDIR;
      return false;
    }
    if (::mkdir(dir.c_str(), 0777) != 0) return false;
    made.insert(parent_of(dir));
  }
  return true;
}

}  // namespace

bool is_python_class(std::string_view type) {
  constexpr std::string_view kOpen = "<class '";
  constexpr std::string_view kClose = "'>";
  if (type.size() <= kOpen.size() + kClose.size() || type.substr(0, kOpen.size()) != kOpen ||
      type.substr(type.size() - kClose.size()) != kClose) {
    return false;
  }
  const std::string_view path =
      type.substr(kOpen.size(), type.size() - kOpen.size() - kClose.size());
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    if (!is_name_part(path.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string saved_tree_problem(const TreeView& tree,
                               const std::function<std::string(const std::string&)>& where) {
  if (tree.kind("meta.json") != TreeView::Kind::File) {
    return where("meta.json") + " is missing or not a file";
  }
  const std::optional<std::string> text = tree.text("meta.json");
  if (!text) return where("meta.json") + " cannot be read";
  Json meta;
  try {
    meta = parse_json(*text, where("meta.json"));
  } catch (const Error& e) {
    return e.what();
  }
  if (!meta.is_object()) return where("meta.json") + " is not a JSON object";
  const std::string problem = meta_problem(meta);
  if (!problem.empty()) return where("meta.json") + ": " + problem;
  return tree_problem(tree, meta, meta["_type"].get<std::string>(), where);
}

std::unique_ptr<TreeView> directory_view(const std::string& root) {
  return std::make_unique<DirectoryView>(root);
}

std::vector<std::string> foreign_entries(const TreeView& tree) {
  OwnershipWalk walk(tree);
  walk.level("");
  return std::move(walk.foreign);
}

std::vector<std::string> move_entries(const std::string& from, const std::string& to,
                                      const std::vector<std::string>& rels, bool durable) {
  std::vector<std::string> failed;
  std::set<std::string> touched;  // directories whose entries changed, synced when durable
  std::function<void(const std::string&)> move = [&](const std::string& rel) {
    const std::string src = join(from, rel);
    const std::string dst = join(to, rel);
    if (make_parents(to, rel, touched) && rename_noreplace(src, dst)) {
      touched.insert(parent_of(src));
      touched.insert(parent_of(dst));
      save_step("moved");
      return;
    }
    const int error = errno;
    struct stat src_st {
    }, dst_st{};
    if (error == EEXIST && ::lstat(src.c_str(), &src_st) == 0 && S_ISDIR(src_st.st_mode) &&
        ::lstat(dst.c_str(), &dst_st) == 0 && S_ISDIR(dst_st.st_mode)) {
      // A directory of the user's where the new tree has one too: merged, entry by entry.
      for (const std::string& name : directory_view(src)->list("")) move(join_rel(rel, name));
      return;
    }
    failed.push_back("'" + src + "' to '" + dst + "': " + std::strerror(error));
  };
  for (const std::string& rel : rels) move(rel);
  if (durable) {
    for (const std::string& dir : touched) sync_dir(dir);
  }
  return failed;
}

}  // namespace tensordict::memmap::detail
