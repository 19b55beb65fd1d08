// tools/tool_files.h (the native tools' calibration_data reader): symbolic links to sample files and
// input folders are followed; a link loop, a broken link and a FIFO are errors naming the entry
// (nothing is opened that could block).
#ifndef __EMSCRIPTEN__
#include "tools/tool_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace fs = std::filesystem;
using namespace ptq;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ptq-tool-files-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel, std::ios::binary) << text;
  }
};

std::vector<std::string> paths_of(const tools::LoadedFiles& f) {
  std::vector<std::string> out;
  for (const auto& e : f.entries) out.push_back(e.path);
  return out;
}

std::string error_of(const fs::path& root) {
  try {
    tools::read_calibration_folder(root);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ToolFiles, FollowsLinkedFilesAndFolders) {
  TempDir t;
  t.write("store/a.npy", "A");
  t.write("store/b.npy", "B");
  t.write("data/x/0.npy", "0");
  fs::create_directory_symlink(t.path / "store", t.path / "data/linked");
  fs::create_symlink(t.path / "store/a.npy", t.path / "data/x/1.npy");
  const tools::LoadedFiles f = tools::read_calibration_folder(t.path / "data");
  EXPECT_EQ(paths_of(f), (std::vector<std::string>{"linked/a.npy", "linked/b.npy", "x/0.npy", "x/1.npy"}));
  EXPECT_EQ(f.bytes[3], std::vector<uint8_t>{'A'});
  // The whole folder behind a link.
  fs::create_directory_symlink(t.path / "data", t.path / "data_link");
  EXPECT_EQ(paths_of(tools::read_calibration_folder(t.path / "data_link")).size(), 4u);
}

TEST(ToolFiles, LoopsBrokenLinksAndFifosNameTheEntry) {
  TempDir t;
  t.write("data/x/0.npy", "0");
  fs::create_directory_symlink(t.path / "data", t.path / "data/x/loop");
  EXPECT_NE(error_of(t.path / "data").find("data/x/loop is a symbolic link loop"), std::string::npos) << error_of(t.path / "data");
  fs::remove(t.path / "data/x/loop");
  fs::create_symlink(t.path / "missing.npy", t.path / "data/x/1.npy");
  EXPECT_NE(error_of(t.path / "data").find("data/x/1.npy is a broken symbolic link"), std::string::npos) << error_of(t.path / "data");
  fs::remove(t.path / "data/x/1.npy");
  ASSERT_EQ(mkfifo((t.path / "data/x/2.npy").c_str(), 0600), 0);
  EXPECT_NE(error_of(t.path / "data").find("data/x/2.npy is not a regular file"), std::string::npos) << error_of(t.path / "data");
}

}  // namespace
#endif
