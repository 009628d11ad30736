// tdtool on a TensorDictStore named by a URL (redis://host:port/DB/TD_ID,
// unix:///path/to/socket?db=DB&td_id=TD_ID): read whole for ls, dump and verify, written by
// convert. Built with the store (hiredis); without it such a path is refused by name.
#include "store_paths.h"

#include "tensordict/errors.h"
#include "tensordict/memmap.h"
#ifdef TDTOOL_STORE
#include "tensordict/store.h"
#endif

namespace tdtool {

bool is_store_url(const std::string& path) {
  for (const char* scheme : {"redis://", "rediss://", "unix://"})
    if (path.rfind(scheme, 0) == 0) return true;
  return false;
}

#ifdef TDTOOL_STORE

namespace store = tensordict::store;

tensordict::memmap::Loaded load_store(const std::string& url) {
  const store::TensorDictStore opened = store::TensorDictStore::open(store::parse_store_url(url));
  tensordict::TensorDict td = opened.to_local();
  const char* type =
      td.is_lazy_stack() ? tensordict::memmap::kLazyStackType : tensordict::memmap::kTensorDictType;
  return {std::move(td), type, std::nullopt, {}};
}

std::vector<std::string> verify_store(const std::string& url) {
  try {
    load_store(url);
  } catch (const tensordict::FormatError& e) {
    return {e.what()};
  }
  return {};
}

void save_store(const tensordict::TensorDict& td, const std::string& url) {
  store::TensorDictStore::from_tensordict(td, store::parse_store_url(url));
}

#else

namespace {
[[noreturn]] void no_store(const std::string& url) {
  throw tensordict::ValueError("'" + url +
                               "' names a store, and this tdtool was built without "
                               "the store (libhiredis-dev)");
}
}  // namespace

tensordict::memmap::Loaded load_store(const std::string& url) { no_store(url); }
std::vector<std::string> verify_store(const std::string& url) { no_store(url); }
void save_store(const tensordict::TensorDict&, const std::string& url) { no_store(url); }

#endif

}  // namespace tdtool
