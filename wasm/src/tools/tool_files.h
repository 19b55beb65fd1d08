#pragma once
// File input shared by the native command-line tools (ptqscope_native, ptq_bench, ptq_calibrate): whole files, and
// a calibration_data/ folder as the data::FileEntry list the core reads (like the page's folders).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "data/calibration_data.h"

namespace ptq::tools {

inline std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  check(static_cast<bool>(in), "cannot open " + path.string());
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check(!in.bad(), "cannot read " + path.string());
  return bytes;
}

// The files' bytes and the entries viewing them (keep both together).
struct LoadedFiles {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<data::FileEntry> entries;
};

// Every regular, non-hidden file under `root`, path relative to it with '/' separators, sorted.
// Symbolic links to files and folders are followed, as in the CLI; a link back to a folder being read
// and anything but a file or a folder (FIFO, socket, device: never opened) is an error naming it.
inline LoadedFiles read_calibration_folder(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error(root.string() + " is not a directory.");
  std::vector<std::string> rel_paths;
  std::vector<fs::path> open_dirs{fs::canonical(root, ec)};  // real paths of the folders being read, by depth
  const auto options = fs::directory_options::follow_directory_symlink;
  for (auto it = fs::recursive_directory_iterator(root, options); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    const size_t depth = static_cast<size_t>(it.depth());
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    const fs::file_status st = it->status(ec);
    if (ec || st.type() == fs::file_type::not_found)
      throw Error(it->path().string() + " is a broken symbolic link" + (ec ? " (" + ec.message() + ")" : ""));
    if (fs::is_directory(st)) {
      const fs::path real = fs::canonical(it->path(), ec);
      open_dirs.resize(depth + 1);
      if (std::find(open_dirs.begin(), open_dirs.end(), real) != open_dirs.end())
        throw Error(it->path().string() + " is a symbolic link loop (it leads back to " + real.string() + ")");
      open_dirs.push_back(real);
      continue;
    }
    check(fs::is_regular_file(st), it->path().string() + " is not a regular file");
    rel_paths.push_back(it->path().lexically_relative(root).generic_string());
  }
  check(!rel_paths.empty(), root.string() + " contains no files");
  std::sort(rel_paths.begin(), rel_paths.end());
  LoadedFiles files;
  files.bytes.reserve(rel_paths.size());  // entries point into these vectors: no reallocation
  for (const auto& rel : rel_paths) {
    files.bytes.push_back(read_file(root / rel));
    files.entries.push_back({rel, files.bytes.back().data(), files.bytes.back().size()});
  }
  return files;
}

}  // namespace ptq::tools
