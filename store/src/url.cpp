// Store URLs: redis://[user[:password]@]host[:port][/DB[/TD_ID]][?query] and
// unix:///path/to/socket[?query], the query taking db, td_id, prefix, user, password.
#include <cctype>
#include <string>

#include "tensordict/store.h"

namespace tensordict::store {
namespace {

// The URL for messages, its password masked (userinfo and query alike).
std::string redacted(std::string_view url) {
  std::string out(url);
  const size_t scheme = out.find("://");
  const size_t at = out.find('@');
  if (scheme != std::string::npos && at != std::string::npos && at > scheme) {
    const size_t colon = out.find(':', scheme + 3);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t end = out.find('&', p);
    out.replace(p + 9, (end == std::string::npos ? out.size() : end) - p - 9, "***");
  }
  return out;
}

[[noreturn]] void bad(std::string_view url, const std::string& why) {
  throw ValueError("store URL '" + redacted(url) + "': " + why);
}

std::string decode(std::string_view url, std::string_view text, const char* what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 2])))
      bad(url, std::string("bad percent escape in the ") + what);
    out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

int parse_int(std::string_view url, std::string_view text, const char* what, int lo, int hi) {
  if (text.empty() || text.size() > 9) bad(url, std::string("bad ") + what);
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') bad(url, std::string("bad ") + what + " '" + std::string(text) + "'");
    value = value * 10 + (c - '0');
  }
  if (value < lo || value > hi)
    bad(url, std::string(what) + " " + std::to_string(value) + " out of range");
  return value;
}

void apply_query(std::string_view url, std::string_view query, StoreLocation& out) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) bad(url, "query item without '='");
    const std::string_view name = item.substr(0, eq);
    const std::string value = decode(url, item.substr(eq + 1), "query");
    if (name == "db")
      out.connection.db = parse_int(url, value, "database number", 0, 1 << 30);
    else if (name == "td_id")
      out.td_id = value;
    else if (name == "prefix")
      out.prefix = value;
    else if (name == "user")
      out.connection.user = value;
    else if (name == "password")
      out.connection.password = value;
    else if (name == "cache_metadata")
      out.cache_metadata = parse_int(url, value, "cache_metadata (0 or 1)", 0, 1) == 1;
    else if (name == "tls_ca_file" && out.connection.tls)
      out.connection.tls_ca_file = value;
    else if (name == "tls_cert_file" && out.connection.tls)
      out.connection.tls_cert_file = value;
    else if (name == "tls_key_file" && out.connection.tls)
      out.connection.tls_key_file = value;
    else
      bad(url, "unknown query parameter '" + std::string(name) +
                   "' (known: db, td_id, prefix, user, password, cache_metadata; with rediss:// "
                   "tls_ca_file, tls_cert_file, tls_key_file)");
  }
}

}  // namespace

StoreLocation parse_store_url(std::string_view url) {
  StoreLocation out;
  std::string_view rest;
  const auto starts = [&](std::string_view scheme) {
    if (url.substr(0, scheme.size()) != scheme) return false;
    rest = url.substr(scheme.size());
    return true;
  };
  const bool unix_socket = starts("unix://");
  out.connection.tls = !unix_socket && starts("rediss://");
  if (!unix_socket && !out.connection.tls && !starts("redis://"))
    bad(url, "expected redis[s]://host:port/DB/TD_ID or unix:///path/to/socket?db=DB&td_id=TD_ID");
  const size_t q = rest.find('?');
  const std::string_view query = q == std::string_view::npos ? "" : rest.substr(q + 1);
  rest = rest.substr(0, q);

  if (unix_socket) {
    if (rest.empty() || rest[0] != '/') bad(url, "the socket path must be absolute");
    out.connection.unix_socket = decode(url, rest, "socket path");
  } else {
    const size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
    const size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      const std::string_view userinfo = authority.substr(0, at);
      const size_t colon = userinfo.find(':');
      out.connection.user = decode(url, userinfo.substr(0, colon), "user");
      if (colon != std::string_view::npos)
        out.connection.password = decode(url, userinfo.substr(colon + 1), "password");
      authority = authority.substr(at + 1);
    }
    std::string_view port;
    if (!authority.empty() && authority[0] == '[') {  // [IPv6]:port
      const size_t close = authority.find(']');
      if (close == std::string_view::npos) bad(url, "unclosed '[' in the host");
      out.connection.host = std::string(authority.substr(1, close - 1));
      const std::string_view after = authority.substr(close + 1);
      if (!after.empty() && after[0] != ':') bad(url, "expected ':' after the host");
      if (!after.empty()) port = after.substr(1);
      if (!after.empty() && port.empty()) bad(url, "empty port");
    } else {
      const size_t colon = authority.find(':');
      out.connection.host = decode(url, authority.substr(0, colon), "host");
      if (colon != std::string_view::npos) {
        port = authority.substr(colon + 1);
        if (port.empty()) bad(url, "empty port");
      }
    }
    if (out.connection.host.empty()) bad(url, "no host");
    if (!port.empty()) out.connection.port = parse_int(url, port, "port", 1, 65535);
    if (!path.empty()) {
      const size_t next = path.find('/');
      out.connection.db = parse_int(url, path.substr(0, next), "database number", 0, 1 << 30);
      if (next != std::string_view::npos) {
        const std::string_view id = path.substr(next + 1);
        if (id.find('/') != std::string_view::npos) bad(url, "path beyond /DB/TD_ID");
        out.td_id = decode(url, id, "td_id");
      }
    }
  }
  apply_query(url, query, out);
  return out;
}

}  // namespace tensordict::store
