#include "frontend/import_safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "frontend/import_types.h"
#include "model/name_rules.h"
#include "tensordict/errors.h"
#include "tensordict/safetensors_format.h"

namespace tcgen {
namespace {

namespace fs = std::filesystem;
namespace st = tensordict::safetensors;

// Reads `n` bytes at `offset` (fewer at the end of the file).
std::vector<unsigned char> read_at(int fd, uint64_t offset, uint64_t n, const std::string& path) {
  std::vector<unsigned char> out(n);
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw tensordict::FormatError("cannot read '" + path + "'");
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  out.resize(done);
  return out;
}

// The header of the file, read without the data.
st::Header read_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw tensordict::FormatError("cannot open '" + path + "'");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    throw tensordict::FormatError("'" + path + "' is not a regular file");
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  std::vector<unsigned char> bytes = read_at(fd, 0, st::kLengthBytes, path);
  if (bytes.size() == st::kLengthBytes) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < st::kLengthBytes; ++i) n |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    // parse_header refuses a length past its bound or the file before it reads the JSON.
    if (n <= st::kMaxHeaderBytes && n <= size - st::kLengthBytes) {
      const std::vector<unsigned char> json = read_at(fd, st::kLengthBytes, n, path);
      bytes.insert(bytes.end(), json.begin(), json.end());
    }
  }
  return st::parse_header(bytes.data(), size, path);
}

}  // namespace

bool is_safetensors_argument(const std::string& path) {
  return fs::path(path).extension() == ".safetensors";
}

Schema import_safetensors(const std::string& path, const std::string& display,
                          const ImportOptions& options, Diagnostics& diagnostics) {
  Schema schema;
  schema.path = path;
  schema.display_path = display;
  schema.cpp_namespace = options.cpp_namespace;
  try {
    KeyTree tree(display, diagnostics);
    for (const st::TensorEntry& e : read_header(path).tensors) {
      Type type = make_type(TypeKind::Tensor);
      const std::string dtype(e.dtype->torch_name);
      if (schema_dtype(dtype)) type.dtype = dtype;  // else any dtype: schemas cannot name it
      std::vector<Dim> shape;
      for (size_t d = 0; d < e.shape.size(); ++d) {
        const bool packed = d + 1 == e.shape.size() && e.dtype->packing > 1;
        shape.push_back(Dim{"", packed ? e.shape[d] / e.dtype->packing : e.shape[d]});
      }
      type.shape = std::move(shape);
      tree.add(tensordict::NestedKey::split(e.name), type, true);
    }
    const std::string name = !options.class_name.empty()
                                 ? options.class_name
                                 : pascal_case(fs::path(path).stem().string());
    schema.classes = tree.classes(name, {});
  } catch (const tensordict::Error& e) {
    diagnostics.error(SourceLoc{display, 0, 0}, e.what());
  }
  return schema;
}

}  // namespace tcgen
