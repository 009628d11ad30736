// What an AOTInductor package says of itself without being loaded (tensordict/nn/call_spec.h):
// the call spec and input checks its wrapper source records. Torch-free: tcgen compiles it too.
//
// The wrapper's constructor assigns the two treespec JSON texts, as a raw string (torch 2.14)
//   in_spec_ = R"([1, {"type": "builtins.tuple", ...}])";
// or as an escaped one (torch 2.6)
//   in_spec_ = "[1, {\"type\": \"builtins.tuple\", ...}]";
#include <string>

#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"
#include "tensordict/zip_files.h"

namespace tensordict::nn {
namespace {

// The text of the string literal assigned to `member` ("in_spec_"), unescaped.
std::string assigned_string(std::string_view source, std::string_view member,
                            const std::string& what) {
  const std::string assignment = std::string(member) + " = ";
  const size_t at = source.find(assignment);
  if (at == std::string_view::npos) {
    throw FormatError(what + ": the wrapper source assigns no " + std::string(member));
  }
  std::string_view rest = source.substr(at + assignment.size());
  if (rest.substr(0, 3) == "R\"(") {
    const size_t end = rest.find(")\"", 3);
    if (end == std::string_view::npos) throw FormatError(what + ": unterminated " + assignment);
    return std::string(rest.substr(3, end - 3));
  }
  if (rest.empty() || rest.front() != '"') {
    throw FormatError(what + ": " + std::string(member) + " is not assigned a string literal");
  }
  std::string out;
  for (size_t i = 1; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == rest.size()) break;
    switch (rest[i]) {
      case '"':
      case '\\':
        out += rest[i];
        break;
      case 'n':
        out += '\n';
        break;
      default:
        throw FormatError(what + ": an unexpected escape '\\" + std::string(1, rest[i]) + "' in " +
                          std::string(member));
    }
  }
  throw FormatError(what + ": unterminated " + std::string(member));
}

}  // namespace

PackageSignature parse_wrapper_source(std::string_view source, const std::string& what) {
  PackageSignature out;
  const std::string in_spec = assigned_string(source, "in_spec_", what);
  const std::string out_spec = assigned_string(source, "out_spec_", what);
  out.call_spec = CallSpec::parse(in_spec, out_spec);
  const size_t leaves = out.call_spec.inputs().leaves();
  out.inputs = parse_input_checks(source, leaves);  // no more checks than inputs
  if (!out.inputs.empty() && out.inputs.size() != leaves) {
    throw FormatError(what + " checks " + std::to_string(out.inputs.size()) +
                      " inputs, but its call spec has " + std::to_string(leaves));
  }
  return out;
}

PackageSignature read_package_signature(const std::string& path) {
  const std::string what = "the AOTInductor package '" + path + "'";
  for (const auto& [name, text] : archive::detail::read_files(path, ".cpp")) {
    // The wrapper is the source that holds the call spec; the others are kernels.
    if (text.find("in_spec_ = ") != std::string::npos) return parse_wrapper_source(text, what);
  }
  throw FormatError(what + " holds no wrapper source (a .cpp entry with the call spec)");
}

}  // namespace tensordict::nn
