#pragma once
// The loader fuzzer's input format: a directory tree as text, so that libFuzzer's mutations act
// on file contents and names alike. Files are separated by lines "--- <relative path>":
//
//   --- meta.json
//   {"x": {"shape": [2], "dtype": "torch.float32"}, "_type": "..."}
//   --- x.memmap
//   <raw bytes>
//
// Paths keep to [A-Za-z0-9_.%-] parts without "." or ".." (3 levels at most); others are skipped.
// fuzz/pack_tree.py turns real directories into this format for the seed corpus.

#include <string>

namespace tc_fuzz {

/// A fresh directory for this process (under /dev/shm when it exists).
std::string scratch_dir();
/// Replaces `dir` with the tree `spec` describes.
void write_tree(const std::string& dir, const std::string& spec);

}  // namespace tc_fuzz
