// The one place that talks to hiredis. Written against the API hiredis 0.14 (Debian 12) and 1.x
// (Debian 13, sid) share: the *WithTimeout connectors, redisSetTimeout, the Argv command forms
// and RESP2 replies.
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <mutex>
#include <utility>

#include "tensordict/store.h"

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

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out.type = Reply::Type::Nil;
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STRING:
      out.type = r->type == REDIS_REPLY_STRING   ? Reply::Type::String
                 : r->type == REDIS_REPLY_STATUS ? Reply::Type::Status
                                                 : Reply::Type::Error;
      // `len` is an int in 0.14 and a size_t in 1.x.
      out.str.assign(r->str, static_cast<size_t>(r->len));
      break;
    default:  // arrays (and, were RESP3 ever negotiated, its aggregate types)
      out.type = Reply::Type::Array;
      out.element.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.element.push_back(convert(r->element[i]));
      break;
  }
  return out;
}

// hiredis writes with write()/send() without MSG_NOSIGNAL: a write to a connection the server
// closed would raise SIGPIPE and end the process. SIGPIPE is blocked on this thread while a
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

// Thrown inside exchange() when the socket failed: the context is unusable from then on.
struct Broken {
  std::string what;
  bool timeout;
};

}  // namespace

struct Connection::State {
  std::mutex mutex;
  redisContext* ctx = nullptr;

  ~State() { drop(); }
  void drop() {
    if (ctx) redisFree(ctx);
    ctx = nullptr;
  }
};

Connection::Connection(ConnectionOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {
  pipeline({}, false);  // connects now, so that a bad address fails here
}

Connection::~Connection() = default;

Reply Connection::command(const std::vector<std::string>& argv) {
  return pipeline({argv}, false).at(0);
}

std::vector<Reply> Connection::pipeline(const std::vector<std::vector<std::string>>& commands,
                                        bool transaction) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  const SigpipeBlock no_sigpipe;

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
    if (options_.command_timeout.count() > 0 &&
        redisSetTimeout(s.ctx, to_timeval(options_.command_timeout)) != REDIS_OK) {
      s.drop();
      throw ConnectionError("cannot set the command timeout on " + describe(options_));
    }
  };

  // Sends `cmds` and reads one reply per command.
  auto exchange = [&](const std::vector<std::vector<std::string>>& cmds) {
    for (const auto& argv : cmds) {
      std::vector<const char*> ptrs;
      std::vector<size_t> lens;
      for (const auto& a : argv) {
        ptrs.push_back(a.data());
        lens.push_back(a.size());
      }
      if (redisAppendCommandArgv(s.ctx, static_cast<int>(argv.size()), ptrs.data(), lens.data()) !=
          REDIS_OK)
        throw Broken{s.ctx->errstr, false};
    }
    std::vector<Reply> replies;
    replies.reserve(cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) {
      void* raw = nullptr;
      errno = 0;
      if (redisGetReply(s.ctx, &raw) != REDIS_OK || !raw) {
        // A read timeout surfaces as an I/O error with EAGAIN (SO_RCVTIMEO).
        const bool timeout =
            s.ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
        throw Broken{s.ctx->errstr, timeout};
      }
      replies.push_back(convert(static_cast<redisReply*>(raw)));
      freeReplyObject(raw);
    }
    return replies;
  };

  // AUTH and SELECT go first on every new connection.
  auto handshake = [&] {
    std::vector<std::vector<std::string>> hello;
    if (!options_.password.empty()) {
      if (options_.user.empty())
        hello.push_back({"AUTH", options_.password});
      else
        hello.push_back({"AUTH", options_.user, options_.password});
    }
    if (options_.db != 0) hello.push_back({"SELECT", std::to_string(options_.db)});
    const auto replies = exchange(hello);
    for (const auto& r : replies) {
      if (r.type == Reply::Type::Error) {
        s.drop();
        throw ConnectionError(describe(options_) + " refused the connection: " + r.str);
      }
    }
  };

  std::vector<std::vector<std::string>> wire;
  if (transaction) wire.push_back({"MULTI"});
  wire.insert(wire.end(), commands.begin(), commands.end());
  if (transaction) wire.push_back({"EXEC"});

  // A connection found broken is replaced once and the batch sent again: the store only sends
  // commands that may run twice (SET, HSET, SADD, SETRANGE, DEL, reads).
  for (int attempt = 0;; ++attempt) {
    try {
      if (!s.ctx) {
        connect();
        handshake();
      }
      std::vector<Reply> replies = exchange(wire);
      if (!transaction) return replies;
      // MULTI's +OK, one +QUEUED (or an error) per command, then EXEC's array.
      std::vector<Reply> out(commands.size());
      const Reply& exec = replies.back();
      for (size_t i = 0; i < commands.size(); ++i) {
        const Reply& queued = replies[i + 1];
        if (queued.type == Reply::Type::Error)
          out[i] = queued;
        else if (exec.type == Reply::Type::Array && i < exec.element.size())
          out[i] = exec.element[i];
        else
          out[i] = exec;  // EXECABORT and the like
      }
      return out;
    } catch (const Broken& b) {
      s.drop();
      if (b.timeout)
        throw TimeoutError("no reply from " + describe(options_) + " within " +
                           std::to_string(options_.command_timeout.count()) + " ms");
      if (attempt > 0 || commands.empty())
        throw ConnectionError("connection to " + describe(options_) + " lost: " + b.what);
    }
  }
}

}  // namespace tensordict::store
