#pragma once
// tests/store/store_peer.py, the real Python TensorDictStore, run on this process's redis-server
// (test_store_python.cpp).

#include <string>

namespace tc_test {

/// The output of store_peer.py's `mode` (with `td_id`) on RedisServer::instance(); the case
/// fails when the script does, and skips without a Python peer or redis-py. The golden schema
/// `nested`'s Python module is on Python's path (the class cases).
std::string run_store_peer(const std::string& mode, const std::string& td_id = "");

}  // namespace tc_test
