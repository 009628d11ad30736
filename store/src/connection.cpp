// The one place that talks to the server. hiredis connects (TCP or unix socket, with the
// connect timeout) and sets the socket's send and receive timeouts; the commands and replies are
// RESP2 written and parsed here on its socket, because hiredis copies every argument into its
// output buffer (twice) and every reply out of its input buffer: here a value goes to the socket
// from where it lies (writev) and a bulk reply is received straight into its string, which the
// store then hands to a tensor without a copy. Written against the API hiredis 0.14 (Debian 12)
// and 1.x (Debian 13, sid) share: the *WithTimeout connectors and redisSetTimeout.
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <utility>

#include "tensordict/store.h"

#ifdef TC_STORE_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#else
struct ssl_st;  // (OpenSSL's SSL, never made without TLS)
#endif

namespace tensordict::store {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// Where the connection goes, for messages (never the password).
std::string describe(const ConnectionOptions& o) {
  if (!o.unix_socket.empty()) return "unix:" + o.unix_socket + " db " + std::to_string(o.db);
  return o.host + ":" + std::to_string(o.port) + " db " + std::to_string(o.db);
}

// Thrown while talking when the socket failed: the connection is unusable from then on.
struct Broken {
  std::string what;
  bool timeout;
};

[[noreturn]] void broken_by_errno(const char* doing) {
  const int e = errno;
  throw Broken{std::string(doing) + ": " + std::strerror(e), e == EAGAIN || e == EWOULDBLOCK};
}

// Arguments shorter than this are copied into the header text; longer ones are sent from where
// they are.
constexpr size_t kInlineArg = 4096;
// The longest bulk reply and the most array elements accepted: a server (or anything answering
// on its port) cannot make the client allocate without bound. 4 GiB is far above the largest
// value a server keeps by default (512 MB).
constexpr int64_t kMaxBulk = int64_t{1} << 32;
constexpr int64_t kMaxElements = int64_t{1} << 28;
constexpr int kMaxDepth = 32;

// OpenSSL writes to the socket without MSG_NOSIGNAL: a write to a connection the server closed
// would raise SIGPIPE and end the process. SIGPIPE is blocked on this thread while a
// command is sent, and one it raised is consumed before the mask is restored (a library must
// not change the process's signal handlers).
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      const timespec zero{0, 0};
      if (sigismember(&pending, SIGPIPE) == 1) sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

// The connection's byte stream: the socket, or the TLS session over it.
struct Channel {
  int fd;
  ssl_st* tls;  // null: plain

  // Sends from the first of `iov` on: the bytes sent (> 0).
  size_t send_some(const iovec* iov, size_t count) const {
    for (;;) {
#ifdef TC_STORE_TLS
      if (tls) {
        const SigpipeBlock no_sigpipe;
        const int n = SSL_write(tls, iov[0].iov_base,
                                static_cast<int>(std::min<size_t>(iov[0].iov_len, INT_MAX)));
        if (n > 0) return static_cast<size_t>(n);
        failed(n, "sending");
        continue;
      }
#endif
      msghdr msg{};
      msg.msg_iov = const_cast<iovec*>(iov);
      msg.msg_iovlen = std::min<size_t>(count, IOV_MAX);
      // MSG_NOSIGNAL: a server that closed the connection is an error here, not SIGPIPE.
      const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (n > 0) return static_cast<size_t>(n);
      if (n < 0 && errno == EINTR) continue;
      broken_by_errno("sending");
    }
  }

  // Receives up to `len` bytes into `buffer`: the bytes received (> 0).
  size_t recv_some(char* buffer, size_t len) const {
    for (;;) {
#ifdef TC_STORE_TLS
      if (tls) {
        const int n = SSL_read(tls, buffer, static_cast<int>(std::min<size_t>(len, INT_MAX)));
        if (n > 0) return static_cast<size_t>(n);
        failed(n, "receiving");
        continue;
      }
#endif
      const ssize_t n = ::recv(fd, buffer, len, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) throw Broken{"the server closed the connection", false};
      if (errno != EINTR) broken_by_errno("receiving");
    }
  }

#ifdef TC_STORE_TLS
  // A TLS call's failure: returns to retry (an interrupted call), throws Broken otherwise.
  void failed(int result, const char* doing) const {
    const int e = errno;
    switch (SSL_get_error(tls, result)) {
      case SSL_ERROR_ZERO_RETURN:
        throw Broken{"the server closed the TLS session", false};
      case SSL_ERROR_WANT_READ:
      case SSL_ERROR_WANT_WRITE:  // the socket's timeout
        throw Broken{std::string(doing) + ": timed out", true};
      case SSL_ERROR_SYSCALL:
        if (e == EINTR) return;
        if (e == EAGAIN || e == EWOULDBLOCK) throw Broken{std::string(doing) + ": timed out", true};
        throw Broken{std::string(doing) + ": " + (e ? std::strerror(e) : "connection closed"),
                     false};
      default: {
        char text[256];
        ERR_error_string_n(ERR_get_error(), text, sizeof text);
        ERR_clear_error();
        throw Broken{std::string(doing) + " over TLS: " + text, false};
      }
    }
  }
#endif
};

// Sends `commands` as RESP2 arrays of bulk strings, in as few writes as the channel allows.
void send_all(const Channel& channel, const std::vector<std::vector<std::string_view>>& commands) {
  std::string text;  // headers and short arguments
  struct Piece {
    bool in_text;
    size_t offset;  // into text
    std::string_view bytes;
  };
  std::vector<Piece> pieces;
  size_t text_start = 0;
  auto cut_text = [&] {
    if (text.size() > text_start) pieces.push_back({true, text_start, {}});
    text_start = text.size();
  };
  // A header line ("*3", "$5") without a temporary string: one is written per argument.
  auto header = [&text](char kind, size_t n) {
    char digits[24];
    char* end = digits + sizeof digits;
    char* at = end;
    do {
      *--at = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0);
    text += kind;
    text.append(at, static_cast<size_t>(end - at));
    text += "\r\n";
  };
  for (const auto& argv : commands) {
    header('*', argv.size());
    for (std::string_view a : argv) {
      header('$', a.size());
      if (a.size() < kInlineArg) {
        text.append(a.data(), a.size());
      } else {
        cut_text();
        pieces.push_back({false, 0, a});
      }
      text += "\r\n";
    }
  }
  cut_text();
  // Text pieces end where the next begins (or at the end): their lengths, now that text is whole.
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].in_text) {
      iov.push_back({const_cast<char*>(pieces[i].bytes.data()), pieces[i].bytes.size()});
      continue;
    }
    size_t end = text.size();
    for (size_t j = i + 1; j < pieces.size(); ++j)
      if (pieces[j].in_text) {
        end = pieces[j].offset;
        break;
      }
    iov.push_back({text.data() + pieces[i].offset, end - pieces[i].offset});
  }
  size_t first = 0;
  while (first < iov.size()) {
    size_t left = channel.send_some(iov.data() + first, iov.size() - first);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

// Replies read from the socket through a buffer; a bulk string's bytes beyond what is buffered
// are received straight into the reply's string.
class ReplyReader {
 public:
  explicit ReplyReader(const Channel& channel) : channel_(channel) {}

  Reply next(int depth = 0) {
    if (depth > kMaxDepth) throw Broken{"a reply nested too deep", false};
    const std::string line = read_line();
    if (line.empty()) throw Broken{"an empty reply line", false};
    Reply out;
    const std::string_view rest(line.data() + 1, line.size() - 1);
    switch (line[0]) {
      case '+':
        out.type = Reply::Type::Status;
        out.str = rest;
        return out;
      case '-':
        out.type = Reply::Type::Error;
        out.str = rest;
        return out;
      case ':':
        out.type = Reply::Type::Integer;
        out.integer = number(rest);
        return out;
      case '$': {
        const int64_t len = number(rest);
        if (len < 0) return out;  // Nil
        if (len > kMaxBulk)
          throw Broken{"a bulk reply of " + std::to_string(len) + " bytes", false};
        out.type = Reply::Type::String;
        read_exact(out.str, static_cast<size_t>(len));
        std::string end;
        read_exact(end, 2);
        if (end != "\r\n") throw Broken{"a bulk reply not ended by CRLF", false};
        return out;
      }
      case '*': {
        const int64_t count = number(rest);
        if (count < 0) return out;  // Nil
        if (count > kMaxElements) throw Broken{"an array reply of " + std::to_string(count), false};
        out.type = Reply::Type::Array;
        out.element.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
        for (int64_t i = 0; i < count; ++i) out.element.push_back(next(depth + 1));
        return out;
      }
      default:
        throw Broken{"a reply of unknown type '" + std::string(1, line[0]) + "'", false};
    }
  }

 private:
  int64_t number(std::string_view text) const {
    int64_t value = 0;
    bool negative = false;
    size_t i = 0;
    if (!text.empty() && text[0] == '-') {
      negative = true;
      i = 1;
    }
    if (i == text.size() || text.size() > 20) throw Broken{"a malformed number in a reply", false};
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') throw Broken{"a malformed number in a reply", false};
      value = value * 10 + (text[i] - '0');
    }
    return negative ? -value : value;
  }

  // Up to CRLF (not included); lines of a reply's header are short.
  std::string read_line() {
    for (;;) {
      const size_t crlf = buffer_.find("\r\n", pos_);
      if (crlf != std::string::npos) {
        std::string line = buffer_.substr(pos_, crlf - pos_);
        pos_ = crlf + 2;
        return line;
      }
      if (buffer_.size() - pos_ > 65536) throw Broken{"a reply line without CRLF", false};
      fill();
    }
  }

  // Allocated at once up to the largest value a server keeps by default; beyond, the string grows
  // (doubling) as bytes arrive, so that a length the server claims but never sends costs nothing.
  void read_exact(std::string& out, size_t n) {
    constexpr size_t kAtOnce = size_t{512} << 20;
    out.resize(std::min(n, kAtOnce));
    const size_t buffered = std::min(n, buffer_.size() - pos_);
    std::memcpy(out.data(), buffer_.data() + pos_, buffered);
    pos_ += buffered;
    for (size_t got = buffered; got < n;) {
      if (got == out.size()) out.resize(std::min(n, 2 * out.size()));
      got += channel_.recv_some(out.data() + got, out.size() - got);
    }
  }

  void fill() {
    if (pos_ > 0) {  // keep what is unread only
      buffer_.erase(0, pos_);
      pos_ = 0;
    }
    const size_t had = buffer_.size();
    buffer_.resize(had + 65536);
    try {
      buffer_.resize(had + channel_.recv_some(buffer_.data() + had, 65536));
    } catch (...) {
      buffer_.resize(had);
      throw;
    }
  }

  const Channel& channel_;
  std::string buffer_;
  size_t pos_ = 0;
};

// The replies of the MULTI ... EXEC group of `count` commands starting at `replies[at]`: EXEC's
// elements, or a command's own error (refused when queued), or EXEC's error for each.
std::vector<Reply> unwrap_transaction(std::vector<Reply>& replies, size_t at, size_t count) {
  std::vector<Reply> out(count);
  Reply& exec = replies[at + count + 1];
  for (size_t i = 0; i < count; ++i) {
    Reply& queued = replies[at + 1 + i];
    if (queued.type == Reply::Type::Error)
      out[i] = std::move(queued);
    else if (exec.type == Reply::Type::Array && i < exec.element.size())
      out[i] = std::move(exec.element[i]);
    else
      out[i] = exec;  // EXECABORT and the like
  }
  return out;
}

}  // namespace

struct Connection::State {
  std::mutex mutex;
  redisContext* ctx = nullptr;
  ssl_st* tls = nullptr;  // the TLS session over ctx's socket (rediss://)
#ifdef TC_STORE_TLS
  SSL_CTX* tls_config = nullptr;  // kept across reconnections
#endif

  ~State() {
    drop();
#ifdef TC_STORE_TLS
    if (tls_config) SSL_CTX_free(tls_config);
#endif
  }
  void drop() {
#ifdef TC_STORE_TLS
    if (tls) SSL_free(tls);
#endif
    tls = nullptr;
    if (ctx) redisFree(ctx);
    ctx = nullptr;
  }
  Channel channel() const { return {ctx->fd, tls}; }
};

namespace {

#ifdef TC_STORE_TLS
std::string tls_error() {
  char text[256] = "unknown error";
  if (const unsigned long e = ERR_get_error()) ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

// The TLS session over the freshly connected socket: the server's certificate checked against
// the CAs and the host name (or address). ConnectionError when it cannot be made.
void start_tls(ssl_st*& tls, SSL_CTX*& tls_config, int fd, const ConnectionOptions& o,
               const std::string& where) {
  if (!tls_config) {
    SSL_CTX* config = SSL_CTX_new(TLS_client_method());
    if (!config) throw ConnectionError("TLS to " + where + ": " + tls_error());
    tls_config = config;
    SSL_CTX_set_verify(config, SSL_VERIFY_PEER, nullptr);
    const bool cas = o.tls_ca_file.empty() ? SSL_CTX_set_default_verify_paths(config) == 1
                                           : SSL_CTX_load_verify_locations(
                                                 config, o.tls_ca_file.c_str(), nullptr) == 1;
    if (!cas)
      throw ConnectionError("TLS to " + where + ": cannot load the CAs '" + o.tls_ca_file +
                            "': " + tls_error());
    if (!o.tls_cert_file.empty() &&
        (SSL_CTX_use_certificate_chain_file(config, o.tls_cert_file.c_str()) != 1 ||
         SSL_CTX_use_PrivateKey_file(config, o.tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1))
      throw ConnectionError("TLS to " + where + ": cannot load the client certificate '" +
                            o.tls_cert_file + "': " + tls_error());
  }
  tls = SSL_new(tls_config);
  if (!tls || SSL_set_fd(tls, fd) != 1)
    throw ConnectionError("TLS to " + where + ": " + tls_error());
  X509_VERIFY_PARAM* check = SSL_get0_param(tls);
  if (X509_VERIFY_PARAM_set1_ip_asc(check, o.host.c_str()) != 1) {  // a name, not an address
    X509_VERIFY_PARAM_set1_host(check, o.host.c_str(), 0);
    SSL_set_tlsext_host_name(tls, o.host.c_str());
  }
  const SigpipeBlock no_sigpipe;
  if (SSL_connect(tls) != 1) {
    const long verified = SSL_get_verify_result(tls);
    const std::string why =
        verified != X509_V_OK ? X509_verify_cert_error_string(verified) : tls_error();
    throw ConnectionError("TLS handshake with " + where + " failed: " + why);
  }
}
#endif

}  // namespace

Connection::Connection(ConnectionOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {
  exchange({});  // connects now, so that a bad address fails here
}

Connection::~Connection() = default;

Reply Connection::command(const std::vector<std::string>& argv) {
  return pipeline({argv}, false).at(0);
}

std::vector<Reply> Connection::pipeline(const std::vector<std::vector<std::string>>& commands,
                                        bool transaction) {
  std::vector<CommandView> views;
  views.reserve(commands.size());
  for (const auto& argv : commands) views.emplace_back(argv.begin(), argv.end());
  if (!transaction) return exchange(views);
  return std::move(transactions({views}).front());
}

std::vector<std::vector<Reply>> Connection::transactions(
    const std::vector<std::vector<CommandView>>& groups) {
  static const CommandView kMulti{"MULTI"};
  static const CommandView kExec{"EXEC"};
  std::vector<CommandView> wire;
  for (const auto& group : groups) {
    wire.push_back(kMulti);
    wire.insert(wire.end(), group.begin(), group.end());
    wire.push_back(kExec);
  }
  std::vector<Reply> replies = exchange(wire);
  std::vector<std::vector<Reply>> out;
  out.reserve(groups.size());
  size_t at = 0;
  for (const auto& group : groups) {
    out.push_back(unwrap_transaction(replies, at, group.size()));
    at += group.size() + 2;
  }
  return out;
}

std::vector<Reply> Connection::exchange(const std::vector<CommandView>& wire) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);

  auto connect = [&] {
    const timeval tv = to_timeval(options_.connect_timeout);
    s.ctx = options_.unix_socket.empty()
                ? redisConnectWithTimeout(options_.host.c_str(), options_.port, tv)
                : redisConnectUnixWithTimeout(options_.unix_socket.c_str(), tv);
    if (!s.ctx || s.ctx->err) {
      const std::string why = s.ctx ? s.ctx->errstr : "out of memory";
      s.drop();
      throw ConnectionError("cannot connect to " + describe(options_) + ": " + why);
    }
    // The socket's SO_SNDTIMEO and SO_RCVTIMEO: a reply (or a send) past it is a TimeoutError.
    if (options_.command_timeout.count() > 0 &&
        redisSetTimeout(s.ctx, to_timeval(options_.command_timeout)) != REDIS_OK) {
      s.drop();
      throw ConnectionError("cannot set the command timeout on " + describe(options_));
    }
    if (options_.tls) {
#ifdef TC_STORE_TLS
      try {
        start_tls(s.tls, s.tls_config, s.ctx->fd, options_, describe(options_));
      } catch (...) {
        s.drop();
        throw;
      }
#else
      s.drop();
      throw ValueError("TLS to " + describe(options_) +
                       ": this TensorClass::store was built without OpenSSL (libssl-dev)");
#endif
    }
  };

  // Sends `cmds` and reads one reply per command.
  auto talk = [&](const std::vector<CommandView>& cmds) {
    std::vector<Reply> replies;
    if (cmds.empty()) return replies;
    const Channel channel = s.channel();
    send_all(channel, cmds);
    ReplyReader reader(channel);
    replies.reserve(cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) replies.push_back(reader.next());
    return replies;
  };

  // AUTH and SELECT go first on every new connection.
  auto handshake = [&] {
    std::vector<CommandView> hello;
    const std::string db = std::to_string(options_.db);
    if (!options_.password.empty()) {
      if (options_.user.empty())
        hello.push_back({"AUTH", options_.password});
      else
        hello.push_back({"AUTH", options_.user, options_.password});
    }
    if (options_.db != 0) hello.push_back({"SELECT", db});
    for (const auto& r : talk(hello)) {
      if (r.type == Reply::Type::Error) {
        s.drop();
        throw ConnectionError(describe(options_) + " refused the connection: " + r.str);
      }
    }
  };

  // A connection found broken is replaced once and the batch sent again: the store only sends
  // commands that may run twice (SET, MSET, HSET, SADD, SETRANGE, DEL, reads).
  for (int attempt = 0;; ++attempt) {
    try {
      if (!s.ctx) {
        connect();
        handshake();
      }
      return talk(wire);
    } catch (const Broken& b) {
      s.drop();
      if (b.timeout)
        throw TimeoutError("no reply from " + describe(options_) + " within " +
                           std::to_string(options_.command_timeout.count()) + " ms");
      if (attempt > 0 || wire.empty())
        throw ConnectionError("connection to " + describe(options_) + " lost: " + b.what);
    }
  }
}

}  // namespace tensordict::store
