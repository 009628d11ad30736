#pragma once
/// \file
/// TensorDicts kept in Redis (or Valkey, or any server speaking its protocol), in the layout of
/// Python tensordict 0.14's `tensordict.store.TensorDictStore`, so that a C++ and a Python process
/// can share one store (docs/store.md). Link TensorClass::store. hiredis stays behind this header:
/// includers need neither its headers nor ATen's umbrella header.
///
/// \code
///   auto where = tensordict::store::parse_store_url("redis://localhost:6379/0/my-run");
///   auto store = tensordict::store::TensorDictStore::from_tensordict(td, where);
///   at::Tensor obs = store.get({"next", "obs"});
///   store.set_at("reward", 3, at::ones({1}));     // one row, written with SETRANGE
///   tensordict::TensorDict local = store.to_local();
/// \endcode
///
/// Errors are the runtime's (tensordict/errors.h), each naming the key: KeyError, ShapeError,
/// TypeError, IndexError, ValueError (a bad URL or argument), FormatError (store contents that do
/// not describe a valid leaf: wrong shape or dtype text, a size that disagrees, a key of the wrong
/// Redis type), TimeoutError; the server's own refusals and a lost connection are ConnectionError.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/errors.h"
#include "tensordict/tensordict.h"

namespace tensordict::store {

/// The server could not be reached or refused a command (an error reply, an authentication
/// failure, a connection lost again right after reconnecting).
class ConnectionError : public Error {
 public:
  using Error::Error;
};

/// How to reach the server.
struct ConnectionOptions {
  std::string host = "localhost";  ///< TCP host (ignored when unix_socket is set)
  int port = 6379;                 ///< TCP port
  std::string unix_socket;         ///< path of a unix socket; used instead of host:port if set
  int db = 0;                      ///< database number (SELECT), as Python's `db=`
  std::string user;                ///< ACL user for `AUTH user password` (empty: `AUTH password`)
  std::string password;            ///< no AUTH when empty
  /// TLS (`rediss://`): the server's certificate is checked against tls_ca_file (the system's CAs
  /// when empty) and `host`. Needs a build with OpenSSL (ValueError otherwise).
  bool tls = false;
  std::string tls_ca_file;    ///< PEM file of the CAs to trust
  std::string tls_cert_file;  ///< a client certificate (PEM), for servers that ask for one
  std::string tls_key_file;   ///< its private key (PEM)
  std::chrono::milliseconds connect_timeout{5000};   ///< connecting (and reconnecting)
  std::chrono::milliseconds command_timeout{30000};  ///< each reply's wait; 0: wait forever
};

/// One reply of the server (RESP2): what hiredis returned, copied out of its structures.
struct Reply {
  /// The reply's RESP2 type.
  enum class Type { Nil, Status, Error, Integer, String, Array };
  Type type = Type::Nil;       ///< which of the members below holds the reply
  std::string str;             ///< Status, Error and String
  int64_t integer = 0;         ///< Integer
  std::vector<Reply> element;  ///< Array
};

/// A connection to one server: connects (timeouts, AUTH, SELECT) on construction, reconnects
/// once on the next command after the connection broke. Commands are argument vectors (binary
/// safe). Calls are serialised by a mutex, so one connection may serve several threads.
class Connection {
 public:
  /// One command's arguments as views: the caller keeps the bytes alive during the call, and
  /// long ones go to the socket from where they are, uncopied (a tensor's memory).
  using CommandView = std::vector<std::string_view>;

  /// Connects; ConnectionError when the server cannot be reached or refuses AUTH or SELECT.
  explicit Connection(ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// One command; an error reply is returned as a Reply of type Error, not thrown.
  Reply command(const std::vector<std::string>& argv);
  /// Several commands sent together, replies in order. With `transaction` they run between
  /// MULTI and EXEC (what redis-py's pipeline() does), atomically on the server.
  std::vector<Reply> pipeline(const std::vector<std::vector<std::string>>& commands,
                              bool transaction);
  /// Several MULTI ... EXEC transactions sent together, in one round trip: each is atomic on the
  /// server, not all of them together. The replies of each transaction's commands, in order.
  std::vector<std::vector<Reply>> transactions(const std::vector<std::vector<CommandView>>& groups);
  /// What this connection was made with.
  const ConnectionOptions& options() const { return options_; }

 private:
  struct State;
  /// Sends `wire` and reads one reply per command (connecting first when needed).
  std::vector<Reply> exchange(const std::vector<CommandView>& wire);
  ConnectionOptions options_;
  std::unique_ptr<State> state_;
};

/// A store's address: the server, the namespace prefix and the TensorDict's id, which make its
/// keys `{prefix}:{<td_id>}:...`.
struct StoreLocation {
  ConnectionOptions connection;       ///< the server
  std::string td_id;                  ///< empty: a new UUID4 when creating
  std::string prefix = "tensordict";  ///< Python's `prefix=` (the namespace)
  /// Python's `cache_metadata=` (default true): the handle keeps the key registry and each tensor
  /// leaf's shape and dtype as it last read or wrote them, so that a read of known leaves is one
  /// MGET (a byte count that no longer fits reads the hash again) and a write one round trip;
  /// another client's new keys, and its same-size rewrites, are seen after refresh()
  /// (docs/store.md, "Semantics"). URL query `cache_metadata=0` turns it off.
  bool cache_metadata = true;
};

/// Parses `redis://[user[:password]@]host[:port][/DB[/TD_ID]]`, the same with `rediss://` (TLS;
/// query parameters `tls_ca_file=`, `tls_cert_file=`, `tls_key_file=`), and
/// `unix:///path/to/socket[?db=DB&td_id=TD_ID]`; all take `prefix=`, `user=`, `password=`,
/// `cache_metadata=` query parameters, and percent-escapes anywhere. ValueError (the password not
/// echoed) on anything else.
StoreLocation parse_store_url(std::string_view url);

/// Python's TensorDictStore: a TensorDict whose leaves live in the store, each read or written
/// when asked for. A handle: copies share the connection. Nested keys are paths joined with "."
/// in the store, so key components may not contain a dot (KeyError).
class TensorDictStore {
 public:
  /// Largest value a server accepts by default (proto-max-bulk-len, 512 MB): a larger leaf is
  /// refused before anything is written.
  static constexpr int64_t kMaxValueBytes = int64_t{512} * 1024 * 1024;

  /// A new store at `where` (a fresh UUID4 id when where.td_id is empty): writes its batch size
  /// and device, as Python's constructor does. Leaves already stored under that id stay.
  static TensorDictStore create(const StoreLocation& where, BatchSize batch_size = {},
                                std::optional<at::Device> device = std::nullopt);
  /// An existing store (Python's from_store): batch size, device and tensorclass read from the
  /// server, or a lazy stack's (is_lazy_stack). KeyError when nothing is stored under that id;
  /// FormatError when its metadata is malformed.
  static TensorDictStore open(const StoreLocation& where);
  /// Uploads `td` into a new store (Python's from_tensordict); the store takes its batch size
  /// and device. An instance of a generated class (or a TensorDict stored as one) records the
  /// class's Python path in `__tensorclass__`, as Python does for a tensorclass. A lazy stack is
  /// stored as Python's LazyStackedTensorDictStore.from_lazy_stack stores one (its tensor leaves;
  /// elements of a leaf may differ in shape).
  static TensorDictStore from_tensordict(const TensorDict& td, const StoreLocation& where);

  /// One leaf of from_schema: its key, its shape after the batch dims, its dtype.
  struct LeafSchema {
    NestedKey key;               ///< where the leaf goes
    std::vector<int64_t> shape;  ///< its shape after the batch dims
    at::ScalarType dtype;        ///< its dtype
  };
  /// Python's from_schema: a new store (as create) whose leaves `schema` names are allocated on
  /// the server, zero-filled, of shape batch_size + shape (one SETRANGE of each leaf's last
  /// byte: no bytes cross the network), to be filled by rows (set_at, set_rows). Every leaf is
  /// checked first (dtype, size limit, structure); nothing is written for a bad one.
  static TensorDictStore from_schema(const std::vector<LeafSchema>& schema,
                                     const StoreLocation& where, BatchSize batch_size,
                                     std::optional<at::Device> device = std::nullopt);

  /// The TensorDict's id and the namespace prefix: its keys are `{prefix}:{<td_id>}:...`.
  ///@{
  const std::string& td_id() const;
  const std::string& prefix() const;
  ///@}
  /// The shared connection (for commands this class does not have).
  Connection& connection() const;
  /// The store key `{prefix}:{<td_id>}:<suffix>` (e.g. suffix "d:next.obs").
  std::string redis_key(std::string_view suffix) const;

  /// The batch size (as stored in `__batch_size__`).
  const BatchSize& batch_size() const;
  /// Changes the batch size and stores it; ShapeError (nothing changed) when a tensor leaf's
  /// leading dims disagree.
  void set_batch_size(BatchSize batch_size);
  /// The device tensors are moved to when read (nullopt: where they are, the CPU).
  std::optional<at::Device> device() const;
  /// The `__tensorclass__` entry: the Python class path a store of a tensorclass records.
  std::optional<std::string> tensorclass() const;

  /// Stores a tensor leaf: its leading dims must be the batch size (ShapeError), its dtype one
  /// the layout carries (TypeError), its size at most kMaxValueBytes (ShapeError). A nested key
  /// creates the levels above it; TypeError where it would turn a leaf into a level or back.
  void set(const NestedKey& key, const at::Tensor& value);
  /// Stores each entry of `value` under `key` (the nested TensorDict's leaves).
  void set(const NestedKey& key, const TensorDict& value);
  /// Stores JSON-like data (Python's non-tensor data, JSON encoded).
  void set_non_tensor(const NestedKey& key, const Json& value);
  /// Stores every entry of `td` (its batch size must start with the store's).
  void update(const TensorDict& td);

  /// The tensor at `key`. KeyError when missing, TypeError when the entry is non-tensor data or a
  /// nested level, FormatError when its stored metadata or bytes are inconsistent.
  at::Tensor get(const NestedKey& key) const;
  /// The entry at `key`: a tensor, NonTensorData, a NonTensorStack (Python's json_array), or a
  /// nested level read into a TensorDict.
  Value get_value(const NestedKey& key) const;
  /// The non-tensor data at `key` (a stack's items as a list); TypeError for a tensor.
  Json get_non_tensor(const NestedKey& key) const;

  /// Rows of a tensor leaf's first dim, read or written as byte ranges (GETRANGE / SETRANGE):
  /// only those bytes cross the network. `row` may be negative (from the end); IndexError when
  /// outside the dim. get_rows reads [start, stop). set_at's `value` has the shape of one row,
  /// set_rows' the rows from `start`; values are cast to the stored dtype. set_at on a missing
  /// key creates a zero-filled leaf of batch_size[0] rows first, as Python does.
  ///@{
  at::Tensor get_at(const NestedKey& key, int64_t row) const;
  at::Tensor get_rows(const NestedKey& key, int64_t start, int64_t stop) const;
  void set_at(const NestedKey& key, int64_t row, const at::Tensor& value);
  void set_rows(const NestedKey& key, int64_t start, const at::Tensor& value);
  ///@}

  /// True when `key` is a leaf or a nested level.
  bool contains(const NestedKey& key) const;
  /// Keys as Python's keys(include_nested, leaves_only), sorted (the server keeps a set).
  std::vector<NestedKey> keys(bool include_nested = false, bool leaves_only = false) const;
  /// Removes a leaf, or a nested level with every leaf under it; KeyError when missing.
  void del_(const NestedKey& key);
  /// Reads every leaf into a local TensorDict (Python's to_local / to_tensordict); a lazy stack
  /// store (one Python's LazyStackedTensorDictStore wrote) gives a lazy stack. A store whose
  /// `__tensorclass__` names a generated class registered here gives an instance's TensorDict
  /// (tensordict::class_of names the class; `C::from_tensordict` or `get<C>` read it as `C`).
  TensorDict to_local() const;
  /// Whether the store is Python's LazyStackedTensorDictStore: only to_local, keys, contains and
  /// clear_redis take one yet (TypeError otherwise).
  bool is_lazy_stack() const;
  /// Forgets the cached registry and metadata (StoreLocation::cache_metadata): the next call
  /// reads them from the server, so another client's new or rewritten leaves are seen.
  void refresh();
  /// Deletes everything the store holds on the server (Python's clear_redis, plus the
  /// `__tensorclass__` entry Python leaves behind). The handle stays usable.
  void clear_redis();

 private:
  struct Impl;
  explicit TensorDictStore(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

/// Python's `td.to_store(...)`: TensorDictStore::from_tensordict(td, where).
inline TensorDictStore to_store(const TensorDict& td, const StoreLocation& where) {
  return TensorDictStore::from_tensordict(td, where);
}

}  // namespace tensordict::store
